"""Extracting an uploaded model ``.zip`` without trusting it."""

from __future__ import annotations

import functools
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any

from rag.core.i18n import gettext_noop

from .checks import check_files, wanted
from .errors import ModelInstallError
from .safety import json_file_problem

MAX_ENTRIES = 10_000


def _mb(size: int) -> str:
    return f"{size / 1024 ** 2:,.1f}"


def _entry_problem(info: zipfile.ZipInfo) -> str | None:
    """Why an entry may not be extracted: a path leaving the folder, or a link."""
    name = info.filename
    path = PurePosixPath(name)
    if "\\" in name or "\x00" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return name
    if ".." in path.parts or path.is_absolute():
        return name
    return None


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def inspect_model_zip(archive: Path, *, max_bytes: int, label: str) -> list[str]:
    """The model files ``archive`` would give (POSIX paths inside the model folder), read from
    its directory without extracting anything; raises ``ModelInstallError`` as
    ``extract_model_zip`` would, for every refusal that needs no extraction."""
    with _open(archive, label) as bundle:
        return [relative for _, relative in _chosen(bundle, max_bytes=max_bytes, label=label)]


def extract_model_zip(archive: Path, target: Path, *, max_bytes: int, label: str, progress: Any = None) -> list[str]:
    """Extract the model folder in ``archive`` into ``target``; returns the files extracted.

    The model may sit at the archive's top level or inside its single top-level folder. Refused
    with a reason (``ModelInstallError``): not a zip, an entry whose path leaves the folder
    (``../``, absolute, a drive letter), a symbolic link, more than ``MAX_ENTRIES`` entries, more
    than ``max_bytes`` once extracted (counted as bytes are written, not as the archive claims),
    and a folder that is not a saved model with safetensors weights. Files that are not model
    files (code, pickled weights, hidden files) are left in the archive.
    """
    with _open(archive, label) as bundle:
        chosen = _chosen(bundle, max_bytes=max_bytes, label=label)
        declared = sum(info.file_size for info, _ in chosen)
        written = 0
        target.mkdir(parents=True, exist_ok=True)
        for info, relative in chosen:
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(info) as source, open(destination, "wb") as sink:
                for block in iter(lambda: source.read(1 << 20), b""):
                    written += len(block)
                    # The sizes in the archive's directory are the sender's word: count for real.
                    if written > max_bytes:
                        raise _too_large(label, written, max_bytes)
                    sink.write(block)
                    if progress is not None:
                        progress("extracting", min(written, declared), declared)
        return [relative for _, relative in chosen]


def _open(archive: Path, label: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ModelInstallError(gettext_noop("{file} is not a .zip archive"), "not_a_zip", file=label) from None


def _chosen(bundle: zipfile.ZipFile, *, max_bytes: int, label: str) -> list[tuple[zipfile.ZipInfo, str]]:
    entries = bundle.infolist()
    if len(entries) > MAX_ENTRIES:
        raise ModelInstallError(gettext_noop("{file} holds {count} entries, more than the {limit} a model archive "
                                             "may hold"), "too_many_entries", file=label, count=len(entries),
                                limit=MAX_ENTRIES)
    for info in entries:
        unsafe = _entry_problem(info)
        if unsafe is not None:
            raise ModelInstallError(gettext_noop("{file} is refused: the entry {entry!r} would be written outside "
                                                 "the model's folder"), "path_traversal", file=label, entry=unsafe)
        if _is_link(info):
            raise ModelInstallError(gettext_noop("{file} is refused: the entry {entry!r} is a symbolic link"),
                                    "link", file=label, entry=info.filename)
    # macOS's archiver adds a __MACOSX/ folder of resource forks beside the real one.
    files = [info for info in entries if not info.is_dir() and not info.filename.startswith("__MACOSX/")]
    prefix = _common_folder([info.filename for info in files])
    chosen = [(info, info.filename[len(prefix):]) for info in files if wanted(info.filename[len(prefix):])]
    check_files([relative for _, relative in chosen], source=label)
    # What the files name is read from the archive too, so such a zip is refused on upload.
    for info, relative in chosen:
        if relative.lower().endswith(".json"):
            problem = json_file_problem(relative, info.file_size, functools.partial(_read_entry, bundle, info))
            if problem is not None:
                raise problem
    declared = sum(info.file_size for info, _ in chosen)
    if declared > max_bytes:
        raise _too_large(label, declared, max_bytes)
    return chosen


def _read_entry(bundle: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """An entry's bytes, at most one more than ``json_file_problem`` reads (the directory's size
    is the sender's word)."""
    from .safety import MAX_CONFIG_BYTES

    try:
        with bundle.open(info) as source:
            data = source.read(MAX_CONFIG_BYTES + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise ValueError(f"unreadable entry: {exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ValueError("larger than its directory says")
    return data


def _too_large(label: str, size: int, limit: int) -> ModelInstallError:
    return ModelInstallError(gettext_noop("{file} holds more than {limit} MB once extracted, the most a model may have "
                                          "here (TRELLIS_MAX_MODEL_MB)"), "too_large", file=label, size=_mb(size),
                             limit=_mb(limit))


def _common_folder(names: list[str]) -> str:
    """``"folder/"`` when every file sits in one top-level folder (a zipped model folder),
    else ``""``."""
    tops = {PurePosixPath(name).parts[0] for name in names if PurePosixPath(name).parts}
    if len(tops) == 1 and all(len(PurePosixPath(name).parts) > 1 for name in names):
        return next(iter(tops)) + "/"
    return ""
