"""The production static files storage: Django's manifest hashing, except for Vite's build.

Vite names every file of the build after its content (``main-i-UtisCF.js``) and writes the
imports between them with those names (``import("./ChatPage-BjNmaV0-.js")``). Hashing them a
second time would give the page ``main-i-UtisCF.<md5>.js`` while its lazy chunks import
``./main-i-UtisCF.js``: two copies of the entry module, two Reacts, a blank page. So the
build is served under the names Vite gave it, and the manifest maps each to itself; every
other static file (the admin's, the favicon) is hashed as usual.
"""

from __future__ import annotations

from typing import Any

from whitenoise.storage import CompressedManifestStaticFilesStorage

VITE_BUILD_PREFIX = "frontend/"


def is_vite_build_file(name: str) -> bool:
    """Whether ``name`` (relative to the static root) is a file of Vite's build."""
    return name.replace("\\", "/").lstrip("/").startswith(VITE_BUILD_PREFIX)


class FrontendStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Compressed, manifest-hashed static files, with Vite's build kept under its own names."""

    def hashed_name(self, name: str, content: Any = None, filename: str | None = None) -> str:
        if is_vite_build_file(name):
            return name
        return super().hashed_name(name, content, filename)
