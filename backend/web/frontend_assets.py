"""The built frontend's entry files, read from the manifest Vite writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings


@dataclass(frozen=True)
class EntryAssets:
    scripts: tuple[str, ...]
    stylesheets: tuple[str, ...]


class FrontendNotBuilt(RuntimeError):
    pass


@lru_cache(maxsize=4)
def _read_manifest(path: Path, modified: float) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def entry_assets(entry: str | None = None) -> EntryAssets:
    """Static paths (relative to STATIC_URL) of the entry's script and stylesheets."""
    path = Path(settings.FRONTEND_MANIFEST)
    entry = entry or settings.FRONTEND_ENTRY
    try:
        manifest = _read_manifest(path, path.stat().st_mtime)
    except FileNotFoundError:
        raise FrontendNotBuilt(f"the frontend is not built ({path} is missing); run `make run`") from None
    if entry not in manifest:
        raise FrontendNotBuilt(f"the frontend manifest {path} has no entry {entry!r}; rebuild the frontend")
    chunk = manifest[entry]
    stylesheets = list(chunk.get("css", []))
    for imported in chunk.get("imports", []):
        stylesheets.extend(manifest.get(imported, {}).get("css", []))
    return EntryAssets(
        scripts=(f"frontend/{chunk['file']}",),
        stylesheets=tuple(f"frontend/{css}" for css in dict.fromkeys(stylesheets)),
    )
