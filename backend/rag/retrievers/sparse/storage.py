"""Saving a ``BM25Index`` to a directory and reading it back.

Layout (format version 1)::

    <directory>/
      manifest.json   {"format", "format_version", "params", "documents", "terms", "nonzeros",
                       "vocabulary", "doc_ids", "arrays": {"file", "sha256", "bytes"}, "metadata"}
      counts.npz      the documents × terms count matrix in CSC form (data, indices, indptr, shape)

Counts, not weights, are stored: weights are recomputed on load in a few vectorised passes,
so ``params`` can change without re-tokenising and a file cannot hold weights that disagree
with its parameters.

Atomicity: ``save`` writes a complete sibling directory, then swaps it in with ``os.replace``
(the old directory is first renamed aside, then deleted). ``load`` opens the directory once
and reads both files relative to that handle, so it reads one save, never a mix; if the save
it holds is deleted under it, or the path is briefly absent between the two renames, it reads
again. The manifest records the array file's SHA-256, so a damaged file is refused rather
than half-read. One writer per directory at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import scipy.sparse as sp

from rag.core.arrays import load_npz
from rag.core.errors import TrellisError

from .bm25 import BM25Index, BM25Parameters
from .vocabulary import Vocabulary

FORMAT = "trellis-bm25-index"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
ARRAYS = "counts.npz"
_READ_ATTEMPTS = 20


class BM25IndexError(TrellisError):
    """A stored BM25 index cannot be used: corrupt, incomplete, or of another format version.
    Rebuilding the index from its documents is always a valid answer."""


class BM25IndexNotFoundError(BM25IndexError, FileNotFoundError):
    """No BM25 index has been saved at the given directory."""


# -- writing ---------------------------------------------------------------------------------


def save_index(index: BM25Index, directory: str | Path) -> Path:
    """Write ``index`` to ``directory`` atomically, replacing a previous index there.

    Parameters
    ----------
    index : BM25Index
    directory : str or Path
        Created if missing (parents too). An existing directory that is not a BM25 index
        (non-empty, no manifest) is refused rather than replaced.

    Returns
    -------
    Path
        The absolute directory.
    """
    target = Path(directory).absolute()
    if target.is_dir() and not (target / MANIFEST).is_file() and any(target.iterdir()):
        raise BM25IndexError(f"refusing to replace {target}: it exists and does not hold a BM25 index")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        arrays_path = staging / ARRAYS
        with open(arrays_path, "wb") as stream:
            # Typed Any so that no array name looks like savez's allow_pickle flag to mypy.
            arrays: dict[str, Any] = index._arrays()
            np.savez(stream, **arrays)
            stream.flush()
            os.fsync(stream.fileno())
        with open(arrays_path, "rb") as stream:
            digest = _sha256(stream)
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "params": index.params.to_dict(),
            "documents": index.n_documents,
            "terms": len(index.vocabulary),
            "nonzeros": index.nnz,
            "vocabulary": list(index.vocabulary.terms),
            "doc_ids": index.doc_ids.tolist(),
            "arrays": {"file": ARRAYS, "sha256": digest, "bytes": arrays_path.stat().st_size},
            "metadata": index.metadata,
        }
        with open(staging / MANIFEST, "w", encoding="utf-8") as stream:
            json.dump(manifest, stream, ensure_ascii=False, separators=(",", ":"))
            stream.flush()
            os.fsync(stream.fileno())
        _fsync_directory(staging)
        _swap_in(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _swap_in(staging: Path, target: Path) -> None:
    retired: Path | None = None
    if target.exists() or target.is_symlink():
        # POSIX rename cannot replace a non-empty directory, so the old one steps aside first.
        retired = target.with_name(f".{target.name}.{uuid.uuid4().hex}.old")
        os.replace(target, retired)
    try:
        os.replace(staging, target)
    except BaseException:
        if retired is not None:
            os.replace(retired, target)
        raise
    _fsync_directory(target.parent)
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _sha256(stream: BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: stream.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


# -- reading ---------------------------------------------------------------------------------


def load_index(directory: str | Path) -> BM25Index:
    """Read the index saved at ``directory``.

    Raises
    ------
    BM25IndexNotFoundError
        Nothing was saved there.
    BM25IndexError
        The manifest or array file is missing, unreadable or inconsistent, or was written in
        another format version; the message says which.
    """
    target = Path(directory).absolute()
    for attempt in range(1, _READ_ATTEMPTS + 1):
        try:
            return _read(target)
        except _Replaced:
            pass
        except BM25IndexNotFoundError:
            if not _saved_meanwhile(target):
                raise
        time.sleep(0.002 * attempt)
    raise BM25IndexError(f"BM25 index at {target} was replaced {_READ_ATTEMPTS} times while being read; try again")


def _saved_meanwhile(target: Path) -> bool:
    """Whether a save explains the directory's absence a moment ago.

    Between a save's two renames the directory is absent and the old one waits aside as
    ``.<name>.<uuid>.old``; by the time a reader looks, the save may have finished and deleted
    it. At every instant one of the two exists, but looking at both takes two system calls,
    so the target is looked at on either side of the listing.
    """
    return target.exists() or any(target.parent.glob(f".{target.name}.*.old")) or target.exists()


class _Replaced(Exception):
    """The directory being read was swapped out by a save; reading again gets the new one."""


def _read(target: Path) -> BM25Index:
    try:
        directory = os.open(target, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise BM25IndexNotFoundError(f"no BM25 index at {target}") from None
    except NotADirectoryError:
        raise BM25IndexError(f"{target} is a file, not a BM25 index directory") from None
    # Every file is opened relative to this one directory handle, so the manifest and the
    # arrays come from the same save even if the path is given to a newer one meanwhile.
    try:
        return _read_from(directory, target)
    finally:
        os.close(directory)


def _was_replaced(directory: int, target: Path) -> bool:
    held = os.fstat(directory)
    try:
        current = target.stat()
    except FileNotFoundError:
        return True
    # The open handle keeps the old inode alive, so its number cannot have been reused.
    return held.st_nlink == 0 or (held.st_dev, held.st_ino) != (current.st_dev, current.st_ino)


def _read_from(directory: int, target: Path) -> BM25Index:
    where = f"BM25 index at {target}"

    try:
        with os.fdopen(os.open(MANIFEST, os.O_RDONLY, dir_fd=directory), "rb") as stream:
            raw = stream.read()
    except FileNotFoundError:
        if _was_replaced(directory, target):
            raise _Replaced from None
        raise BM25IndexError(f"{where} is incomplete: {MANIFEST} is missing") from None
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BM25IndexError(f"{where}: {MANIFEST} is corrupt ({exc})") from None
    _check_format(manifest, where)
    try:
        arrays_entry = manifest["arrays"]
        n_documents, n_terms = int(manifest["documents"]), int(manifest["terms"])
        vocabulary = Vocabulary(_list_of(manifest["vocabulary"], str, "vocabulary"))
        doc_ids = _list_of(manifest["doc_ids"], int, "doc_ids")
        params = BM25Parameters.from_dict(manifest["params"])
        metadata = manifest.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise TypeError("metadata is not an object")
        arrays_name = arrays_entry["file"]
        expected_digest = arrays_entry["sha256"]
        if not isinstance(arrays_name, str) or Path(arrays_name).name != arrays_name:
            raise ValueError(f"arrays file {arrays_name!r} is not a plain file name")
    except (KeyError, TypeError, ValueError) as exc:
        raise BM25IndexError(f"{where}: {MANIFEST} is corrupt ({_describe(exc)})") from None
    if len(vocabulary) != n_terms or len(doc_ids) != n_documents:
        raise BM25IndexError(
            f"{where}: {MANIFEST} is corrupt (it declares {n_documents} documents and {n_terms} terms but lists "
            f"{len(doc_ids)} doc ids and {len(vocabulary)} terms)"
        )

    try:
        descriptor = os.open(arrays_name, os.O_RDONLY, dir_fd=directory)
    except FileNotFoundError:
        if _was_replaced(directory, target):
            raise _Replaced from None
        raise BM25IndexError(f"{where} is incomplete: {arrays_name} is missing") from None
    with os.fdopen(descriptor, "rb") as stream:
        if _sha256(stream) != expected_digest:
            raise BM25IndexError(f"{where}: {arrays_name} does not match its checksum in {MANIFEST} (corrupt)")
        stream.seek(0)
        try:
            arrays = load_npz(stream, ("data", "indices", "indptr", "shape"))
            data, indices, indptr, shape = (arrays[name] for name in ("data", "indices", "indptr", "shape"))
        except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
            raise BM25IndexError(f"{where}: {arrays_name} is unreadable ({_describe(exc)})") from None

    try:
        if tuple(int(size) for size in shape) != (n_documents, n_terms):
            raise ValueError(f"matrix shape {tuple(shape)} differs from the manifest's ({n_documents}, {n_terms})")
        for name, array in (("data", data), ("indices", indices), ("indptr", indptr)):
            if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
                raise ValueError(f"{name} is not a vector of integers")
        counts = sp.csc_matrix((data, indices, indptr), shape=(n_documents, n_terms))
        counts.check_format(full_check=True)
        if counts.nnz != manifest.get("nonzeros", counts.nnz):
            raise ValueError(f"{counts.nnz} stored counts, the manifest says {manifest['nonzeros']}")
        if counts.nnz and counts.data.min() <= 0:
            raise ValueError("term counts must be positive")
        return BM25Index(counts, vocabulary, doc_ids=doc_ids, params=params, metadata=metadata)
    except (TypeError, ValueError) as exc:
        raise BM25IndexError(f"{where} is inconsistent ({_describe(exc)})") from None


def _check_format(manifest: Any, where: str) -> None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BM25IndexError(f"{where}: {MANIFEST} is not a Trellis BM25 index manifest")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BM25IndexError(
            f"{where} has format version {version!r}; this Trellis reads version {FORMAT_VERSION}. "
            f"Rebuild the index."
        )


def _list_of(values: Any, kind: type, name: str) -> list[Any]:
    if not isinstance(values, list) or not all(isinstance(v, kind) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{name} is not a list of {kind.__name__}")
    return values


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]!r}"
    return str(exc) or type(exc).__name__
