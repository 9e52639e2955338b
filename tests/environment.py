"""Process-wide test environment, loaded as a pytest plugin (``-p tests.environment``) so it
runs before pytest-django reads the settings."""

import atexit
import os
import shutil
import tempfile

# No test reaches a real model hub: a download that nobody pointed at the tests' own loopback
# hub (tests/support/fake_hub.py) goes to a closed loopback port and fails at once.
# huggingface_hub reads its offline switches once, at import: the tests' hub must stay reachable.
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.pop("TRANSFORMERS_OFFLINE", None)
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("SECRET_KEY", "test-only-secret-key")
# What an administrator would allow for the pipelines of ordinary users (common/reach.py): the
# tests' scripted OpenAI-compatible servers listen on loopback, and the models they build (tiny
# cross-encoders) are saved in temporary folders. Tests of the refusals override these.
# The public servers the tests name (OpenAI's, a gateway) resolve nowhere offline, and a name
# that resolves nowhere is refused like a private address: they are allowed by name instead.
os.environ.setdefault("TRELLIS_OUTBOUND_ALLOW",
                      "127.0.0.1,localhost,api.openai.com,gateway.example,gateway.example.org")
os.environ.setdefault("TRELLIS_MODELS_DIRS", tempfile.gettempdir())
# Tests about other things make one user do the work of many (a hundred chats at once, a
# fuzzer's thousand requests a minute): a user's concurrent runs and session API requests are
# not limited unless a test says so (the tests of those limits set them).
os.environ.setdefault("TRELLIS_MAX_CONCURRENT_RUNS_PER_USER", "0")
os.environ.setdefault("TRELLIS_SESSION_API_RATE_LIMIT", "0")
# Tests never touch the developer's var/ or ~/.config/trellis: each run gets its own data
# directory and configuration folder (where the credentials key lives).
# They are removed when the process ends: a data directory holds ~0.5 GB of assembled models, and
# a few hundred runs left behind fill a disk.
for variable, prefix in (("TRELLIS_DATA_DIR", "trellis-test-data-"), ("XDG_CONFIG_HOME", "trellis-test-config-")):
    os.environ[variable] = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, os.environ[variable], ignore_errors=True)
