"""Document vectors kept on disk, so a second run over the same texts embeds nothing.

The cache is a folder of ``.npy`` files, one per group of texts (a document's chunks, or a
whole evaluation corpus), named after the embedding component, the settings that change its
vectors and the group's exact texts. Files are written whole and renamed into place, so
processes sharing a folder never read half a file; a file that cannot be read is embedded
again and replaced.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rag.core.arrays import load_npy
from rag.locations import engine_data_dir

logger = logging.getLogger(__name__)

# Settings that change how fast vectors come, not what they are.
RUNTIME_ONLY = frozenset({"batch_size", "threads", "device", "timeout", "credential"})


def default_vector_cache_dir() -> Path:
    """``$TRELLIS_DATA_DIR/vectors``, else ``~/.cache/trellis/vectors``."""
    return engine_data_dir() / "vectors"


def encoder_identity(embedder: Any) -> str:
    """What names an embedder's vectors: its component (two components sharing a vector space
    still give slightly different vectors) and every setting but the runtime ones."""
    config = embedder.to_config()
    params = {name: value for name, value in config.get("params", {}).items() if name not in RUNTIME_ONLY}
    return f"{config['component']}:{embedder.model_key}:{json.dumps(params, sort_keys=True, default=str)}"


class VectorCache:
    """Vectors of groups of texts, read from ``folder`` when there, else embedded and saved."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def embed(self, embedder: Any, groups: Sequence[Sequence[str]]) -> tuple[np.ndarray, int]:
        """The vectors of every text of ``groups``, in order, and how many had to be embedded.

        The groups missing from the cache are embedded in one call (so batching spans them)
        and each is saved on its own: a changed document costs only its own texts.
        """
        encoder = encoder_identity(embedder)
        files = [self._file(encoder, group) for group in groups]
        found: list[np.ndarray | None] = [self._read(path, len(group)) for path, group in zip(files, groups, strict=True)]
        missing = [index for index, vectors in enumerate(found) if vectors is None]
        texts = [text for index in missing for text in groups[index]]
        if texts:
            fresh = embedder.embed_documents(texts)
            start = 0
            for index in missing:
                rows = fresh[start:start + len(groups[index])]
                start += len(groups[index])
                found[index] = rows
                self._write(files[index], rows)
        present = [vectors for vectors in found if vectors is not None and len(vectors)]
        if not present:
            return np.zeros((0, 1), dtype=np.float32), 0
        return np.concatenate(present).astype(np.float32, copy=False), len(texts)

    def _file(self, encoder: str, texts: Sequence[str]) -> Path:
        digest = hashlib.sha256("\x00".join([encoder, *texts]).encode()).hexdigest()[:20]
        return self.folder / f"vectors-{digest}.npy"

    @staticmethod
    def _read(path: Path, rows: int) -> np.ndarray | None:
        if not path.is_file():
            return None
        try:
            vectors = load_npy(path)
        except (OSError, ValueError) as exc:
            logger.warning("cached vectors %s are unreadable, embedding again: %s", path, exc)
            return None
        if vectors.ndim != 2 or vectors.shape[0] != rows or vectors.dtype != np.float32:
            logger.warning("cached vectors %s have shape %s for %d texts, embedding again", path, vectors.shape, rows)
            return None
        return vectors

    @staticmethod
    def _write(path: Path, vectors: np.ndarray) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}-{threading.get_ident()}.tmp.npy")
            np.save(temporary, np.asarray(vectors, dtype=np.float32))
            os.replace(temporary, path)
        except OSError as exc:  # a full or read-only disk costs the next run time, not this answer
            logger.warning("could not keep vectors in %s: %s", path, exc)
