"""Process-wide test environment, loaded as a pytest plugin (``-p tests.environment``) so it
runs before pytest-django reads the settings."""

import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("SECRET_KEY", "test-only-secret-key")
# Tests never touch the developer's var/: each run gets its own data directory.
os.environ["TRELLIS_DATA_DIR"] = tempfile.mkdtemp(prefix="trellis-test-data-")
