"""Where Trellis finds the evaluation datasets it reads in place (never copies).

Kept free of heavy imports: Django's settings and the benchmarks both ask it at start-up.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

DATASETS_VARIABLE = "TRELLIS_DATASETS_DIR"


def engine_data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the engine keeps what it makes outside a knowledge base (assembled models, folder
    vectors, Chroma stores): ``TRELLIS_DATA_DIR``, else ``~/.cache/trellis``."""
    data = environ.get("TRELLIS_DATA_DIR")
    return Path(data) if data else Path.home() / ".cache" / "trellis"


def models_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where models assembled or derived from packaged files live: ``TRELLIS_MODELS_DIR``, else
    ``<engine_data_dir>/models``."""
    explicit = environ.get("TRELLIS_MODELS_DIR")
    return Path(explicit) if explicit else engine_data_dir(environ) / "models"

SHARED_DATASETS = Path("shared") / "datasets"


def datasets_dir(checkout: Path, environ: Mapping[str, str] = os.environ) -> Path:
    """The folder of BEIR datasets offered by name.

    ``$TRELLIS_DATASETS_DIR`` when set; else the nearest folder above the checkout that holds
    ``shared/datasets``, or, for a clone, above the repository it was cloned from; else
    ``<checkout>/../shared/datasets`` (which then does not exist, and says so where it is used).
    """
    configured = environ.get(DATASETS_VARIABLE, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    for start in (checkout, *_clone_origins(checkout)):
        for folder in Path(start).resolve().parents:
            if (folder / SHARED_DATASETS).is_dir():
                return folder / SHARED_DATASETS
    return checkout.resolve().parent / SHARED_DATASETS


def _clone_origins(checkout: Path) -> Iterator[Path]:
    """The local repository ``checkout`` was cloned from, when it was cloned from a folder."""
    if not (checkout / ".git").exists():
        return
    try:
        url = subprocess.run(
            ["git", "-C", str(checkout), "config", "--get", "remote.origin.url"],
            capture_output=True, text=True, timeout=5, check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    url = url.removeprefix("file://")
    if url and Path(url).is_dir():
        yield Path(url)
