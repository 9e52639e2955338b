"""Django settings. Every value that differs between machines comes from the environment, read
here and nowhere else; each optional integration (PostgreSQL, Redis, a Chroma server) is
switched on by its variable and off by default."""

from __future__ import annotations

import base64
import ipaddress
import os
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from rag.locations import datasets_dir

BASE_DIR = Path(__file__).resolve().parents[2]
BACKEND_DIR = BASE_DIR / "backend"


def _env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def _env_bool(name: str, default: bool = False) -> bool:
    raw = _env_str(name)
    if not raw:
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no or on/off")


def _env_int(name: str, default: int) -> int:
    raw = _env_str(name)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def _env_list(name: str, default: list[str]) -> list[str]:
    raw = _env_str(name)
    return [item.strip() for item in raw.split(",") if item.strip()] if raw else default


DEBUG = _env_bool("DEBUG", False)

DATA_DIR = Path(_env_str("TRELLIS_DATA_DIR") or BASE_DIR / "var").resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

# The environment's key, else the one `make run` generated into the data directory, so that
# every command run after it (manage.py ask, evaluate...) signs with the server's key.
SECRET_KEY_FILE = DATA_DIR / "secret_key"
SECRET_KEY = _env_str("SECRET_KEY") or (SECRET_KEY_FILE.read_text().strip() if SECRET_KEY_FILE.is_file() else "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            f"SECRET_KEY is not set and {SECRET_KEY_FILE} does not exist. Trellis refuses to start in "
            "production (DEBUG off) without a secret key: run `make run` once (it generates the key "
            "file), set the SECRET_KEY environment variable to a long random string, or set DEBUG=1 "
            "for local development."
        )
    SECRET_KEY = "insecure-development-key-used-only-with-DEBUG"


def _new_private_key_file(path: Path) -> None:
    try:  # O_EXCL: when two processes start at once, the first one's key is kept
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(descriptor, "w") as key_file:
        key_file.write(base64.urlsafe_b64encode(os.urandom(32)).decode("ascii") + "\n")


# Stored credentials are encrypted with this Fernet key: the environment's, else the file
# TRELLIS_CREDENTIALS_KEY_FILE, by default in the user's configuration folder (made by `make run`;
# DEBUG and tests make it themselves). It lives apart from the data directory on purpose: a backup
# of the data directory must not also be the key that decrypts every credential in it.
CONFIG_DIR = Path(_env_str("XDG_CONFIG_HOME") or Path.home() / ".config").expanduser() / "trellis"
TRELLIS_CREDENTIALS_KEY = _env_str("TRELLIS_CREDENTIALS_KEY")
TRELLIS_CREDENTIALS_KEY_FILE = None if TRELLIS_CREDENTIALS_KEY else Path(
    _env_str("TRELLIS_CREDENTIALS_KEY_FILE") or CONFIG_DIR / "credentials.key").expanduser()
LEGACY_CREDENTIALS_KEY_FILE = DATA_DIR / "credentials.key"
if TRELLIS_CREDENTIALS_KEY_FILE is not None:
    if not TRELLIS_CREDENTIALS_KEY_FILE.exists() and LEGACY_CREDENTIALS_KEY_FILE.exists():
        raise ImproperlyConfigured(
            f"The credentials key is in the data directory ({LEGACY_CREDENTIALS_KEY_FILE}), where a backup of the data "
            f"would carry it too. Move it out: run `make run` (it moves it to {TRELLIS_CREDENTIALS_KEY_FILE}), or "
            f"`mkdir -p {TRELLIS_CREDENTIALS_KEY_FILE.parent} && mv {LEGACY_CREDENTIALS_KEY_FILE} "
            f"{TRELLIS_CREDENTIALS_KEY_FILE}`."
        )
    if DEBUG or "pytest" in sys.modules:
        TRELLIS_CREDENTIALS_KEY_FILE.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _new_private_key_file(TRELLIS_CREDENTIALS_KEY_FILE)
    if TRELLIS_CREDENTIALS_KEY_FILE.exists():
        TRELLIS_CREDENTIALS_KEY = TRELLIS_CREDENTIALS_KEY_FILE.read_text().strip()
if not TRELLIS_CREDENTIALS_KEY:
    raise ImproperlyConfigured(
        f"TRELLIS_CREDENTIALS_KEY is not set and {TRELLIS_CREDENTIALS_KEY_FILE} does not exist. Trellis encrypts "
        "stored credentials with this key and refuses to start in production (DEBUG off) without it: set "
        "TRELLIS_CREDENTIALS_KEY to a Fernet key (`make run` generates one into your configuration folder), or set "
        "DEBUG=1 for local development."
    )
TRELLIS_CREDENTIALS_OLD_KEYS = _env_list("TRELLIS_CREDENTIALS_OLD_KEYS", [])  # keys it replaced, while rotating

ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "common",
    "jobs",
    "accounts",
    "catalog",
    "knowledge",
    "credentials",
    "pipelines",
    "chat",
    "evaluation",
    "models",
    "gateway",
    "web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "common.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "common.middleware.QueryLanguageMiddleware",
    "common.limits.RequestBodyLimitMiddleware",  # before anything reads a body
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.SignInThrottleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        _env_str("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'trellis.sqlite3'}",
        conn_max_age=_env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the server read while background jobs write; IMMEDIATE transactions take the
    # write lock up front instead of failing with "database is locked" half-way.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;",
        "transaction_mode": "IMMEDIATE",
    }
    # Background jobs run on threads beside the request; Django's default shared-cache in-memory
    # test database locks them out, so tests use a file in the (per-run) data directory.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-database.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = _env_str("REDIS_URL") or None
if REDIS_URL:
    # redis-py 8 gives every read a 5 s socket timeout by default, no longer than channels-redis's
    # 5 s blocking receive, so an idle websocket's consumer would die; reads get more room here.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 5}]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

CHROMA_URL = _env_str("CHROMA_URL") or None
CHROMA_PATH = DATA_DIR / "chroma"

# Background jobs: a thread pool in the server process, or Celery workers once Redis is there.
TRELLIS_JOBS_BACKEND = _env_str("TRELLIS_JOBS_BACKEND") or ("celery" if REDIS_URL else "threads")
if TRELLIS_JOBS_BACKEND not in ("threads", "celery"):
    raise ImproperlyConfigured(f"TRELLIS_JOBS_BACKEND={TRELLIS_JOBS_BACKEND!r}: use threads or celery")
if TRELLIS_JOBS_BACKEND == "celery" and not REDIS_URL:
    raise ImproperlyConfigured("TRELLIS_JOBS_BACKEND=celery needs REDIS_URL: Redis is the workers' broker")
TRELLIS_JOB_WORKERS = _env_int("TRELLIS_JOB_WORKERS", 2)
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# jobs.Priority on Redis: its queues keep one list per priority step, lowest number served first.
CELERY_BROKER_TRANSPORT_OPTIONS = {"queue_order_strategy": "priority", "priority_steps": [0, 5, 9]}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Limits on what users may upload; each refusal names the limit.
TRELLIS_MAX_UPLOAD_BYTES = _env_int("TRELLIS_MAX_UPLOAD_MB", 50) * 1024 * 1024
TRELLIS_MAX_PAGES = _env_int("TRELLIS_MAX_PAGES", 2000)
TRELLIS_MAX_CHARACTERS = _env_int("TRELLIS_MAX_CHARACTERS", 20_000_000)
TRELLIS_MAX_CHUNKS_PER_DOCUMENT = _env_int("TRELLIS_MAX_CHUNKS_PER_DOCUMENT", 50_000)
DATA_UPLOAD_MAX_NUMBER_FILES = _env_int("TRELLIS_MAX_FILES_PER_UPLOAD", 100)
# The longest chunk: a chunker configured for longer ones is refused, and so is a document
# that chunks into longer ones (a token chunker counts tokens, which can be long).
TRELLIS_MAX_CHUNK_CHARACTERS = _env_int("TRELLIS_MAX_CHUNK_CHARACTERS", 20_000)
# PDF, DOCX, HTML and Markdown are parsed in a child process, killed past this many seconds and
# capped at this much memory: some hostile files drive their parsers into minutes or gigabytes.
TRELLIS_PARSE_TIMEOUT_S = _env_int("TRELLIS_PARSE_TIMEOUT_S", 120)
TRELLIS_PARSE_MEMORY_MB = _env_int("TRELLIS_PARSE_MEMORY_MB", 2048)
# Large uploads are spooled to disk while a request is read: into the data directory, so that
# nothing of a user's lands outside it.
FILE_UPLOAD_TEMP_DIR = DATA_DIR / "tmp"
FILE_UPLOAD_TEMP_DIR.mkdir(exist_ok=True)

# What the pipelines of users who are not administrators may reach (common/reach.py): public
# addresses, plus these hosts, host:port pairs, addresses and networks (e.g. 127.0.0.1,
# llm.internal:8000, 10.0.0.0/8); model files only inside these folders.
TRELLIS_OUTBOUND_ALLOW = _env_list("TRELLIS_OUTBOUND_ALLOW", [])
TRELLIS_MODELS_DIRS = [Path(folder).expanduser() for folder in _env_list("TRELLIS_MODELS_DIRS", [str(DATA_DIR / "models")])]

# Evaluation datasets in the BEIR layout, importable by folder name (read in place, never copied).
TRELLIS_DATASETS_DIR = datasets_dir(BASE_DIR)

# Models beyond the packaged ones are installed on request (the Models page, `manage.py models
# install`) into TRELLIS_MODELS_DIR/installed. TRELLIS_OFFLINE=1 forbids every download from a
# model hub (installs from a .zip or a local folder still work) and keeps the libraries offline.
TRELLIS_OFFLINE = _env_bool("TRELLIS_OFFLINE", False)
if TRELLIS_OFFLINE:
    os.environ["HF_HUB_OFFLINE"] = "1"
TRELLIS_MODELS_DIR = Path(_env_str("TRELLIS_MODELS_DIR") or DATA_DIR / "models").expanduser().resolve()
# The largest model (the sum of its files) a hub download or an uploaded .zip may hold.
TRELLIS_MAX_MODEL_BYTES = _env_int("TRELLIS_MAX_MODEL_MB", 5120) * 1024 * 1024

# Load the packaged local LLM when the server starts, so the first question does not wait for it
# (make run turns it on; tests and scripts leave it off).
TRELLIS_WARM_LOCAL_LLM = _env_bool("TRELLIS_WARM_LOCAL_LLM", False)

# How many earlier question–answer pairs a chat sends along, so follow-up questions work.
TRELLIS_CHAT_HISTORY_TURNS = _env_int("TRELLIS_CHAT_HISTORY_TURNS", 3)

# Requests one API token may make per minute to the OpenAI-compatible API and the MCP server
# (0: no limit); past it they are refused with 429 and Retry-After.
TRELLIS_API_RATE_LIMIT = _env_int("TRELLIS_API_RATE_LIMIT", 60)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", _("English")),
    ("es", _("Spanish")),
    ("zh-hant", _("Traditional Chinese")),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_NAME = "trellis_language"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Django's manifest hashing for every static file but Vite's build, which is fingerprinted
    # already and must keep the names its modules import each other by (web/static_storage.py).
    "staticfiles": {"BACKEND": "web.static_storage.FrontendStaticFilesStorage"},
}
# Served with a year's caching: Vite's build files (``name-<8 characters>.ext``) and the files
# Django's manifest renamed (``name.<12 hex digits>.ext``); anything else is revalidated.
WHITENOISE_IMMUTABLE_FILE_TEST = r"^/static/(frontend/assets/[^/]+-[\w-]{8}\.\w+|.+\.[0-9a-f]{12}\.\w+)$"
# Vite fingerprints the frontend's files itself; the manifest it writes names them.
FRONTEND_MANIFEST = BASE_DIR / "static" / "frontend" / ".vite" / "manifest.json"
FRONTEND_ENTRY = "src/main.tsx"

MEDIA_ROOT = DATA_DIR / "media"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "common.permissions.OwnsPathObjects",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "common.parsers.BoundedJSONParser",  # deeply nested JSON is a 400, not a RecursionError
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # TRELLIS_SESSION_API_RATE_LIMIT requests a minute per signed-in user (issue 38).
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttles.SessionUserRateThrottle"],
    "EXCEPTION_HANDLER": "common.api.exception_handler",
    "DEFAULT_PAGINATION_CLASS": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Trellis API",
    "DESCRIPTION": "Knowledge bases, retriever trees, pipelines and chat of the Trellis RAG workbench.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The 400/403/404/415 answers DRF gives before a view runs, documented on every operation.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.openapi.document_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "DocumentStatusEnum": "knowledge.models.Document.Status",
        "VectorIndexStatusEnum": "knowledge.models.VectorIndex.Status",
        "EvaluationStatusEnum": "evaluation.models.Evaluation.Status",
        "ModelInstallStatusEnum": "models.models.ModelInstall.Status",
        "KnowledgeBaseLanguageEnum": "knowledge.models.KnowledgeBase.Language",
        "ComponentKindEnum": "rag.core.registry.KINDS",
        "ModelKindEnum": "rag.models_manager.checks.KINDS",
        "InstallableModelKindEnum": "rag.models_manager.checks.INSTALLABLE_KINDS",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": _env_str("LOG_LEVEL") or "INFO"},
}

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"

SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# TRELLIS_HTTPS=1 when Trellis is served over TLS (usually a reverse proxy in front of daphne):
# cookies are sent over HTTPS only, browsers are told to use HTTPS for a year (HSTS), and plain
# http is redirected. It cannot be the default: the embedded default (`make run`) serves plain
# http on 127.0.0.1, where secure cookies would never come back and the redirect would lead
# nowhere. TRELLIS_TRUST_X_FORWARDED_PROTO=1 lets the proxy say a request came in over HTTPS
# (only behind a proxy that sets the header itself; a client could send it too).
TRELLIS_HTTPS = _env_bool("TRELLIS_HTTPS", False)
if TRELLIS_HTTPS:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = _env_int("TRELLIS_HSTS_SECONDS", 365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # Probes reach the server directly, over plain http.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
if _env_bool("TRELLIS_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Adding a site to the browsers' HSTS preload lists is the operator's decision about their whole
# domain (and hard to undo), not something an application can opt into for them.
SILENCED_SYSTEM_CHECKS = ["security.W021"]

# Sign-in throttling (accounts.services): this many failures per user name and address lock
# that pair out for the window. Counters live in the cache: Redis once REDIS_URL is set (shared
# by every server process), else this process's memory.
TRELLIS_LOGIN_MAX_FAILURES = _env_int("TRELLIS_LOGIN_MAX_FAILURES", 10)
TRELLIS_LOGIN_LOCKOUT_MINUTES = _env_int("TRELLIS_LOGIN_LOCKOUT_MINUTES", 15)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    if REDIS_URL else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                       # Room for every counter: a full cache evicts entries, and a throttle's
                       # counters must not be evicted by flooding it with new names.
                       "OPTIONS": {"MAX_ENTRIES": 200_000}}
}

# -- Security, round 2 (issue 19): throttles, request limits --------------------------------------
# One address may fail for at most this many user names in the window; a user name may fail this
# many times from all addresses together, after which only addresses the user signed in from
# before may try it (docs/deploy.md, "Sign-in throttling").
TRELLIS_LOGIN_MAX_NAMES_PER_ADDRESS = _env_int("TRELLIS_LOGIN_MAX_NAMES_PER_ADDRESS", 10)
TRELLIS_LOGIN_MAX_FAILURES_PER_NAME = _env_int("TRELLIS_LOGIN_MAX_FAILURES_PER_NAME", 100)
# Reverse proxies whose X-Forwarded-For is believed (addresses or networks, comma-separated):
# behind one, every client would otherwise share the proxy's address. None by default: a client
# can send the header itself.
TRELLIS_TRUSTED_PROXIES = _env_list("TRELLIS_TRUSTED_PROXIES", [])
for _proxy in TRELLIS_TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"TRELLIS_TRUSTED_PROXIES: {_proxy!r} is not an IP address or network") from None
# The largest request body: an upload of several files must fit in it (each file within
# TRELLIS_MAX_UPLOAD_MB); refused from its Content-Length, before it is read. Other bodies (JSON,
# forms) are held to Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
TRELLIS_MAX_REQUEST_BYTES = _env_int("TRELLIS_MAX_REQUEST_MB", TRELLIS_MAX_UPLOAD_BYTES // 1024 // 1024 + 10) * 1024 * 1024
# Uploaded files are counted as they are read: one past TRELLIS_MAX_UPLOAD_MB is not stored further.
FILE_UPLOAD_HANDLERS = [
    "common.uploads.LimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Evaluation datasets (BEIR folders and uploaded zips) are read within these limits, while they
# are read: text unpacked in all (a gzipped corpus decompressed), files in an archive, and one
# record (a line); a longer record is left out and reported with its line.
TRELLIS_DATASET_MAX_BYTES = _env_int("TRELLIS_DATASET_MAX_MB", 1024) * 1024 * 1024
TRELLIS_DATASET_MAX_FILES = _env_int("TRELLIS_DATASET_MAX_FILES", 1000)
TRELLIS_DATASET_MAX_RECORD_BYTES = _env_int("TRELLIS_DATASET_MAX_RECORD_KB", 1024) * 1024

# -- Security, round 3 (issue 38): bounded runs, local model servers, API use ----------------------
# Every run stops at a wall-clock deadline and an LLM-call budget (nested agentic retrievers
# included), its trace saying which stopped it; one user may have this many questions being
# answered at once (0: no limit). docs/deploy.md, "Limits on runs and API use".
TRELLIS_RUN_DEADLINE_S = _env_int("TRELLIS_RUN_DEADLINE_S", 300)
TRELLIS_RUN_MAX_LLM_CALLS = _env_int("TRELLIS_RUN_MAX_LLM_CALLS", 40)
TRELLIS_MAX_CONCURRENT_RUNS_PER_USER = _env_int("TRELLIS_MAX_CONCURRENT_RUNS_PER_USER", 2)
# llama.cpp servers of the local model this process may hold, and their memory in all (0: no
# memory limit); the least recently used idle one is closed to make room.
TRELLIS_LOCAL_LLM_MAX_SERVERS = _env_int("TRELLIS_LOCAL_LLM_MAX_SERVERS", 3)
TRELLIS_LOCAL_LLM_MAX_MEMORY_MB = _env_int("TRELLIS_LOCAL_LLM_MAX_MEMORY_MB", 4096)
# Active API tokens one user may hold; TRELLIS_API_RATE_LIMIT counts the requests of all of a
# user's tokens together. The session API (the browser app) allows this many requests a minute
# per user (0: no limit).
TRELLIS_MAX_API_TOKENS_PER_USER = _env_int("TRELLIS_MAX_API_TOKENS_PER_USER", 10)
TRELLIS_SESSION_API_RATE_LIMIT = _env_int("TRELLIS_SESSION_API_RATE_LIMIT", 600)
# The earlier turns of an OpenAI-compatible request that are kept (and stored with its
# conversation); older ones are left out.
TRELLIS_GATEWAY_HISTORY_TURNS = _env_int("TRELLIS_GATEWAY_HISTORY_TURNS", 20)
