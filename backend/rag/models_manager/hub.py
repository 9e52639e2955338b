"""Downloading a model repository from the Hugging Face Hub with ``huggingface_hub``.

The repository's file list (sizes and checksums) is read once for a fixed commit; each wanted
file is fetched with ``hf_hub_download`` into a folder kept between attempts, so an interrupted
download resumes (``huggingface_hub`` keeps the partial file and asks for the rest with a
``Range`` header), and every file is checked against the hub's checksum before it is used: the
SHA-256 of an LFS file, the git blob id of any other.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.core.i18n import gettext_noop

from .checks import check_files, wanted
from .errors import ModelInstallError

logger = logging.getLogger(__name__)

REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?")
_VERIFIED = "verified.json"


@dataclass(frozen=True)
class Snapshot:
    folder: Path
    """The download folder; ``files`` holds the model."""
    commit: str
    endpoint: str
    license: str | None

    @property
    def files(self) -> Path:
        return self.folder / "files"


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    sha256: str | None
    blob_id: str | None


def endpoint_of(endpoint: str | None) -> str:
    from huggingface_hub import constants

    return (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def _folder_stem(repo_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "--", repo_id)


def partial_downloads(repo_id: str, partial_root: Path) -> list[Path]:
    """The folders ``download_snapshot`` left for ``repo_id`` under ``partial_root``, one per
    commit it started to fetch (a download that completed moved its own away)."""
    if not partial_root.is_dir():
        return []
    pattern = re.compile(re.escape(_folder_stem(repo_id)) + r"--[0-9a-f]{1,12}")
    return sorted(folder for folder in partial_root.iterdir() if folder.is_dir() and pattern.fullmatch(folder.name))


def download_snapshot(repo_id: str, partial_root: Path, *, revision: str | None, endpoint: str | None,
                      token: str | None, max_bytes: int, progress: Any = None) -> Snapshot:
    """Fetch ``repo_id`` at ``revision`` (default: main) into ``partial_root``; returns the
    verified snapshot. Raises ``ModelInstallError`` with the reason otherwise."""
    if not REPO_ID.fullmatch(repo_id or ""):
        raise ModelInstallError(gettext_noop("{repo_id!r} is not a Hugging Face model id (like "
                                             "cross-encoder/ms-marco-MiniLM-L-6-v2)"), "bad_repo_id", repo_id=repo_id)
    base = endpoint_of(endpoint)
    commit, files, license = _remote_files(repo_id, revision, base, token)
    chosen = [remote for remote in files if wanted(remote.path)]
    check_files([remote.path for remote in chosen], source=repo_id)
    total = sum(remote.size for remote in chosen)
    if total > max_bytes:
        raise ModelInstallError(gettext_noop("{repo_id} is {size} MB, more than the {limit} MB a model may have here "
                                             "(TRELLIS_MAX_MODEL_MB)"), "too_large", repo_id=repo_id,
                                size=_mb(total), limit=_mb(max_bytes))
    folder = partial_root / f"{_folder_stem(repo_id)}--{commit[:12]}"
    target = folder / "files"
    target.mkdir(parents=True, exist_ok=True)
    _need_space(folder, total - _present_bytes(target, chosen))

    verified = _read_verified(folder)
    counter = _ByteCounter(total, progress)
    for remote in chosen:
        if verified.get(remote.path) != (remote.sha256 or remote.blob_id) or not (target / remote.path).is_file():
            _download(repo_id, remote, commit, target, base, token, counter)
            verified[remote.path] = _verify(target / remote.path, remote, repo_id)
            _write_verified(folder, verified)
        counter.file_done(remote.size)
    # What was not asked for (and huggingface_hub's own bookkeeping) is not part of the model.
    shutil.rmtree(target / ".cache", ignore_errors=True)
    (folder / _VERIFIED).unlink(missing_ok=True)
    return Snapshot(folder=folder, commit=commit, endpoint=base, license=license)


def _remote_files(repo_id: str, revision: str | None, endpoint: str, token: str | None
                  ) -> tuple[str, list[RemoteFile], str | None]:
    from huggingface_hub import HfApi
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        info = HfApi(endpoint=endpoint, token=token or None).model_info(repo_id, revision=revision,
                                                                         files_metadata=True, timeout=30)
    except OfflineModeIsEnabled:
        raise ModelInstallError(gettext_noop("downloads from the hub are switched off here (HF_HUB_OFFLINE=1)"),
                                "offline") from None
    except GatedRepoError:
        raise ModelInstallError(gettext_noop("{repo_id} is gated on the hub: accept its terms there and store a hub "
                                             "token"), "gated", repo_id=repo_id) from None
    except RevisionNotFoundError:
        raise ModelInstallError(gettext_noop("{repo_id} has no revision {revision!r} on the hub"), "no_revision",
                                repo_id=repo_id, revision=revision or "main") from None
    except RepositoryNotFoundError:
        raise ModelInstallError(gettext_noop("the hub at {endpoint} has no model {repo_id} (or it is private)"),
                                "not_found", repo_id=repo_id, endpoint=endpoint) from None
    except HfHubHTTPError as exc:
        logger.warning("the hub refused model_info(%s)", repo_id, exc_info=True)
        status = exc.response.status_code if exc.response is not None else 0
        raise ModelInstallError(gettext_noop("the hub at {endpoint} answered HTTP {status} for {repo_id}"),
                                "hub_error", endpoint=endpoint, status=status, repo_id=repo_id) from None
    except Exception as exc:  # httpx's connection errors, timeouts, DNS…
        logger.warning("could not reach the hub for %s", repo_id, exc_info=True)
        raise ModelInstallError(gettext_noop("could not reach the hub at {endpoint} ({error}); check the network, "
                                             "or install from a .zip instead"), "unreachable", endpoint=endpoint,
                                error=type(exc).__name__) from None
    if not info.sha or not info.siblings:
        raise ModelInstallError(gettext_noop("the hub at {endpoint} listed no files for {repo_id}"), "no_files",
                                endpoint=endpoint, repo_id=repo_id)
    files = []
    for sibling in info.siblings:
        lfs = sibling.lfs
        size = lfs.size if lfs is not None else sibling.size
        if size is None:
            raise ModelInstallError(gettext_noop("the hub at {endpoint} gave no size for {path}"), "no_files",
                                    endpoint=endpoint, path=sibling.rfilename)
        files.append(RemoteFile(sibling.rfilename, int(size), lfs.sha256 if lfs is not None else None,
                                sibling.blob_id))
    card = info.card_data
    license = card.get("license") if card is not None else None
    return info.sha, files, str(license) if license else None


class _ByteCounter:
    """Bytes received so far over the whole snapshot, reported as ``downloading``: the files
    finished, plus what ``huggingface_hub`` reports of the one in flight (a resumed file starts
    at the bytes already on disk)."""

    def __init__(self, total: int, progress: Any) -> None:
        self.total, self.finished, self.current, self.progress = total, 0, 0, progress
        self._lock = threading.Lock()

    def _report(self) -> None:
        if self.progress is not None:
            self.progress("downloading", min(self.total, self.finished + self.current), self.total)

    def add(self, count: int) -> None:
        with self._lock:
            self.current = max(0, self.current + count)
        self._report()

    def file_done(self, size: int) -> None:
        with self._lock:
            self.finished += size
            self.current = 0
        self._report()

    def bar(self) -> type:
        """A stand-in for tqdm that ``huggingface_hub`` updates as bytes arrive."""
        counter = self

        class Bar:
            def __init__(self, *args: Any, initial: int = 0, **kwargs: Any) -> None:
                if initial:
                    counter.add(initial)

            def update(self, count: int | float | None = 1) -> None:
                counter.add(int(count or 0))

            def __enter__(self) -> Bar:
                return self

            def __exit__(self, *exc: Any) -> None:
                return None

            def close(self) -> None:
                return None

            def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
                return None

        return Bar


def _download(repo_id: str, remote: RemoteFile, commit: str, target: Path, endpoint: str, token: str | None,
              counter: _ByteCounter) -> None:
    from huggingface_hub import hf_hub_download

    try:
        hf_hub_download(repo_id, remote.path, revision=commit, local_dir=target, endpoint=endpoint,
                        token=token or None, tqdm_class=counter.bar(), etag_timeout=30)
    except Exception as exc:
        logger.warning("downloading %s from %s failed", remote.path, repo_id, exc_info=True)
        raise ModelInstallError(gettext_noop("downloading {path} of {repo_id} failed ({error}); start the install "
                                             "again to resume it"), "download_failed", path=remote.path,
                                repo_id=repo_id, error=type(exc).__name__) from None


def _verify(path: Path, remote: RemoteFile, repo_id: str) -> str:
    """The hub's checksum of ``remote``, once ``path`` is checked against it (deleted if it fails)."""
    if path.stat().st_size != remote.size:
        path.unlink(missing_ok=True)
        raise ModelInstallError(gettext_noop("{path} of {repo_id} arrived with {size} bytes instead of {expected}; "
                                             "start the install again"), "checksum", path=remote.path,
                                repo_id=repo_id, size=path.stat().st_size if path.exists() else 0,
                                expected=remote.size)
    if remote.sha256:
        digest, expected = _file_digest(path, hashlib.sha256()), remote.sha256
    elif remote.blob_id:
        # A git blob id: SHA-1 of "blob <size>\0" followed by the content.
        seed = hashlib.sha1(f"blob {remote.size}\0".encode())
        digest, expected = _file_digest(path, seed), remote.blob_id
    else:
        raise ModelInstallError(gettext_noop("the hub gave no checksum for {path} of {repo_id}, so it cannot be "
                                             "verified"), "checksum", path=remote.path, repo_id=repo_id)
    if digest != expected.lower():
        path.unlink(missing_ok=True)
        raise ModelInstallError(gettext_noop("{path} of {repo_id} does not match the hub's checksum; it was deleted, "
                                             "start the install again"), "checksum", path=remote.path, repo_id=repo_id)
    return expected


def _file_digest(path: Path, digest: Any) -> str:
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _present_bytes(target: Path, chosen: list[RemoteFile]) -> int:
    present = 0
    for remote in chosen:
        path = target / remote.path
        if path.is_file():
            present += min(path.stat().st_size, remote.size)
    return present


def _need_space(folder: Path, needed: int) -> None:
    free = shutil.disk_usage(folder).free
    if needed > 0 and free < needed + 100 * 1024 ** 2:
        raise ModelInstallError(gettext_noop("the disk holding {folder} has {free} MB free; this model needs {needed} "
                                             "MB more"), "no_space", folder=str(folder), free=_mb(free),
                                needed=_mb(needed))


def _read_verified(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / _VERIFIED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(key): str(value) for key, value in data.items()} if isinstance(data, dict) else {}


def _write_verified(folder: Path, verified: dict[str, str]) -> None:
    temporary = folder / f"{_VERIFIED}.tmp"
    temporary.write_text(json.dumps(verified), encoding="utf-8")
    os.replace(temporary, folder / _VERIFIED)


def _mb(size: int) -> str:
    return f"{size / 1024 ** 2:,.1f}"
