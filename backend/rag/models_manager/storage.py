"""Installed models on disk: one folder per model, each with a manifest.

``<root>/<name>/trellis-model.json`` describes the model (kind, source, size, licence, what the
load check learnt, and its ``owner``: empty for a model every user may use, else the one user it
is private to); its files sit in ``<root>/<name>/files/``, or, for a registered folder, stay
where they are (the manifest's ``path``). A model appears only once its folder is complete:
installs build it under ``<root>/.staging/`` (hub downloads under ``<root>/.partial/``, kept
between attempts so a download resumes) and rename it into place as the last step.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import fcntl
import json
import os
import re
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.core.i18n import gettext_noop

from .checks import INSTALLABLE_KINDS, KINDS, check_loads, licence_of
from .errors import ModelInstallError

MANIFEST = "trellis-model.json"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
DEFAULT_MAX_BYTES = 5 * 1024 ** 3

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stages ``downloading`` and ``extracting`` count bytes;
``checking`` (the load check) goes from 0 to 1 of 1."""


@dataclass(frozen=True)
class InstalledModel:
    """A model this machine can run, installed or packaged."""

    name: str
    kind: str
    path: Path
    source: dict[str, Any]
    size: int
    license: str | None = None
    installed_at: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None
    """The user it is private to (their id, as the adapter gives it), or None: shared by all."""

    @property
    def version(self) -> str:
        """Changes whenever the model under this name is replaced (loaded copies then reload)."""
        return self.installed_at or ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "path": str(self.path), "source": dict(self.source),
                "size": self.size, "license": self.license, "installed_at": self.installed_at,
                "details": dict(self.details), "owner": self.owner}


@dataclass(frozen=True)
class Viewer:
    """Who is looking at the installed models: a user (``owner``, their id as manifests store
    it) who sees the shared models and their own, or an administrator who sees every one."""

    owner: str | None
    admin: bool = False

    def sees(self, model: InstalledModel) -> bool:
        return self.admin or model.owner is None or model.owner == self.owner


_viewer: contextvars.ContextVar[Viewer | None] = contextvars.ContextVar("trellis_model_viewer", default=None)


@contextlib.contextmanager
def viewing_as(owner: str | None, *, admin: bool = False) -> Iterator[Viewer]:
    """Inside, ``ModelStore.visible`` lists what this user may see (the adapter sets it around
    a request); outside any, only the shared models."""
    viewer = Viewer(owner, admin)
    token = _viewer.set(viewer)
    try:
        yield viewer
    finally:
        _viewer.reset(token)


def current_viewer() -> Viewer | None:
    return _viewer.get()


def spelt_as_path(reference: str) -> bool:
    """Whether a model reference, where a name or a folder is accepted, names a folder: an absolute
    path, or one starting with ``.``, ``~`` or ``/``. Anything else is a name (an installed
    model's, or a hub id), whatever exists under the working directory: trying the path first, as
    sentence-transformers does, would tell a user who may not name server paths which exist."""
    return reference.startswith((".", "~", "/")) or Path(reference).is_absolute()


def default_root(environ: dict[str, str] | os._Environ = os.environ) -> Path:
    """``$TRELLIS_MODELS_DIR/installed``, else ``$TRELLIS_DATA_DIR/models/installed``, else
    ``~/.cache/trellis/models/installed`` (as the packaged GGUF models are found)."""
    explicit = environ.get("TRELLIS_MODELS_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser() / "installed"
    data = environ.get("TRELLIS_DATA_DIR", "").strip()
    base = Path(data).expanduser() / "models" if data else Path.home() / ".cache" / "trellis" / "models"
    return base / "installed"


def name_problem(name: str) -> ModelInstallError | None:
    if not NAME_PATTERN.fullmatch(name or "") or ".." in name:
        return ModelInstallError(
            gettext_noop("{name!r} is not a model name: use 1 to 100 letters, digits, dots, dashes or underscores, "
                         "starting with a letter or digit"), "bad_name", name=name)
    return None


def default_name(reference: str) -> str:
    """A model name from a hub id, a file or a folder: its last part, cut to what names allow."""
    last = reference.rstrip("/").replace("\\", "/").split("/")[-1]
    for suffix in (".zip", ".ZIP"):
        last = last.removesuffix(suffix)
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", last).strip("-._")[:100]
    return cleaned or "model"


def folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


class ModelStore:
    """The models installed under ``root``.

    Parameters
    ----------
    root : Path
        The folder holding one sub-folder per installed model (created on first install).
    offline : bool
        Refuse hub downloads (``TRELLIS_OFFLINE=1``).
    max_bytes : int
        The largest model (the sum of its files) a hub download or an archive may hold.
    """

    def __init__(self, root: Path, *, offline: bool = False, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(root)
        self.offline = offline
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._names: set[str] = set()

    # -- reading ----------------------------------------------------------------------------

    def installed(self, kind: str | None = None) -> list[InstalledModel]:
        """Every installed model (of ``kind``), by name; a folder without a readable manifest,
        or a registered folder that has gone, is left out."""
        if not self.root.is_dir():
            return []
        models = []
        for folder in sorted(self.root.iterdir()):
            if folder.name.startswith(".") or not folder.is_dir():
                continue
            model = self._read(folder)
            if model is not None and (kind is None or model.kind == kind):
                models.append(model)
        return models

    def visible(self, kind: str | None = None) -> list[InstalledModel]:
        """``installed(kind)`` as the current viewer (``viewing_as``) may see them; with none
        set, the shared ones only."""
        viewer = current_viewer()
        return [model for model in self.installed(kind)
                if (model.owner is None if viewer is None else viewer.sees(model))]

    def get(self, name: str) -> InstalledModel | None:
        if name_problem(name) is not None:
            return None
        return self._read(self.root / name)

    def resolve(self, reference: str, kind: str) -> InstalledModel | None:
        """The installed model of ``kind`` that ``reference`` names: an installed name, or the
        hub id a shared model was downloaded from (so ``cross-encoder/ms-marco-MiniLM-L-6-v2``
        finds the copy installed from it). A private model is named by its name only, so a hub
        id never leads one user to another's copy."""
        model = self.get(reference)
        if model is not None:
            return model if model.kind == kind else None
        if "/" not in reference:
            return None
        for candidate in self.installed(kind):
            if (candidate.owner is None and candidate.source.get("type") == "hub"
                    and candidate.source.get("repo_id") == reference):
                return candidate
        return None

    def _read(self, folder: Path) -> InstalledModel | None:
        try:
            data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            model = InstalledModel(
                name=str(data["name"]), kind=str(data["kind"]), path=Path(data["path"]),
                source=dict(data.get("source") or {}), size=int(data.get("size") or 0),
                license=data.get("license"), installed_at=data.get("installed_at"),
                details=dict(data.get("details") or {}),
                owner=str(data["owner"]) if data.get("owner") is not None else None,
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if model.name != folder.name or model.kind not in KINDS or not model.path.is_dir():
            return None
        return model

    # -- installing -------------------------------------------------------------------------

    def install_folder(self, folder: Path, *, kind: str, name: str | None = None, copy: bool = False,
                       progress: Progress | None = None, owner: str | None = None) -> InstalledModel:
        """Register a local model folder in place (``copy=False``: its files stay where they
        are) or install a copy of it, once it loads as ``kind``.

        A registered folder is trusted as its owner's: every file it holds is used as it is,
        pickled weights included (the loaders read them with ``weights_only``).
        """
        folder = Path(folder).expanduser()
        name = name or default_name(str(folder))
        self._check_request(kind, name)
        if not folder.is_dir():
            raise ModelInstallError(gettext_noop("{path} is not a directory"), "not_a_directory", path=str(folder))
        folder = folder.resolve()
        if not (folder / "config.json").is_file():
            raise ModelInstallError(gettext_noop("{source} holds no config.json at its top level, so it is not a "
                                                 "saved Hugging Face model"), "no_config", source=str(folder))
        with self._reserved(name):
            if not copy:
                details = self._check(kind, folder, progress)
                return self._place(name, kind, folder, {"type": "folder", "path": str(folder)}, details,
                                   staging=None, owner=owner)
            staging = self._staging()
            try:
                files = staging / "files"
                shutil.copytree(folder, files, symlinks=False,
                                ignore=shutil.ignore_patterns(".*", "__pycache__"))
                details = self._check(kind, files, progress)
                return self._place(name, kind, files, {"type": "folder", "path": str(folder), "copied": True},
                                   details, staging=staging, owner=owner)
            finally:
                shutil.rmtree(staging, ignore_errors=True)

    def install_zip(self, archive: Path, *, kind: str, name: str | None = None, original_name: str | None = None,
                    progress: Progress | None = None, owner: str | None = None) -> InstalledModel:
        """Install the model folder an uploaded ``.zip`` holds (at its top level or in its one
        top-level folder); path traversal, links, archive bombs and files over ``max_bytes``
        are refused, and only safe files are extracted (``checks.wanted``). ``owner``: the user
        the model is private to, or None for a model every user may use."""
        from .archives import extract_model_zip

        label = original_name or Path(archive).name
        name = name or default_name(label)
        self._check_request(kind, name)
        with self._reserved(name):
            staging = self._staging()
            try:
                files = staging / "files"
                extract_model_zip(Path(archive), files, max_bytes=self.max_bytes, label=label, progress=progress)
                details = self._check(kind, files, progress)
                return self._place(name, kind, files, {"type": "zip", "file": label}, details, staging=staging,
                                   owner=owner)
            finally:
                shutil.rmtree(staging, ignore_errors=True)

    def install_hub(self, repo_id: str, *, kind: str, name: str | None = None, revision: str | None = None,
                    endpoint: str | None = None, token: str | None = None,
                    progress: Progress | None = None, owner: str | None = None) -> InstalledModel:
        """Download ``repo_id`` from the Hugging Face Hub (``endpoint``, else ``HF_ENDPOINT``,
        else huggingface.co), verify every file against the hub's checksums, check that it
        loads as ``kind`` and install it. An interrupted download resumes where it stopped."""
        from .hub import download_snapshot

        if self.offline:
            raise ModelInstallError(gettext_noop("this server is offline (TRELLIS_OFFLINE=1): it downloads no model; "
                                                 "install from a .zip or a local folder instead"), "offline")
        name = name or default_name(repo_id)
        self._check_request(kind, name)
        with self._reserved(name):
            snapshot = download_snapshot(repo_id, self.root / ".partial", revision=revision, endpoint=endpoint,
                                         token=token, max_bytes=self.max_bytes, progress=progress)
            details = self._check(kind, snapshot.files, progress)
            source = {"type": "hub", "repo_id": repo_id, "revision": snapshot.commit, "endpoint": snapshot.endpoint}
            model = self._place(name, kind, snapshot.files, source, details, staging=snapshot.folder,
                                license=snapshot.license, owner=owner)
            return model

    def discard_download(self, repo_id: str) -> int:
        """Delete what unfinished hub downloads of ``repo_id`` kept to resume from (every
        revision); returns the bytes freed. Installed models are never touched; the caller makes
        sure no install is downloading ``repo_id`` now."""
        from .hub import partial_downloads

        freed = 0
        for folder in partial_downloads(repo_id, self.root / ".partial"):
            freed += folder_size(folder)
            shutil.rmtree(folder, ignore_errors=True)
        return freed

    def remove(self, name: str) -> InstalledModel:
        """Delete an installed model (a registered folder's own files are left alone)."""
        model = self.get(name)
        if model is None:
            raise ModelInstallError(gettext_noop("no model named {name!r} is installed"), "not_installed", name=name)
        with self._reserved(name):
            trash = self.root / ".staging" / f"removed-{uuid.uuid4().hex}"
            trash.parent.mkdir(parents=True, exist_ok=True)
            os.rename(self.root / name, trash)
            shutil.rmtree(trash, ignore_errors=True)
        return model

    # -- the steps --------------------------------------------------------------------------

    def _check_request(self, kind: str, name: str) -> None:
        if kind not in INSTALLABLE_KINDS:
            raise ModelInstallError(gettext_noop("models of kind {kind} cannot be installed; installable kinds: {kinds}"),
                                    "kind_not_installable", kind=kind, kinds=", ".join(INSTALLABLE_KINDS))
        problem = name_problem(name)
        if problem is not None:
            raise problem
        if (self.root / name).exists():
            raise ModelInstallError(gettext_noop("a model named {name!r} is installed already; remove it first or "
                                                 "choose another name"), "name_taken", name=name)

    @contextlib.contextmanager
    def _reserved(self, name: str) -> Iterator[None]:
        """Hold ``name`` for one install or removal: in this process, and across processes (a
        server and a ``manage.py`` command) through a lock file the system releases with its
        holder."""
        with self._lock:
            if name in self._names:
                raise ModelInstallError(gettext_noop("{name!r} is being installed already"), "busy", name=name)
            self._names.add(name)
        try:
            locks = self.root / ".locks"
            locks.mkdir(parents=True, exist_ok=True)
            with open(locks / f"{name}.lock", "w") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise ModelInstallError(gettext_noop("{name!r} is being installed already"), "busy",
                                            name=name) from None
                yield
        finally:
            with self._lock:
                self._names.discard(name)

    def _staging(self) -> Path:
        staging = self.root / ".staging" / uuid.uuid4().hex
        staging.mkdir(parents=True)
        return staging

    @staticmethod
    def _check(kind: str, files: Path, progress: Progress | None) -> dict[str, Any]:
        if progress is not None:
            progress("checking", 0, 1)
        details = check_loads(kind, files)
        if progress is not None:
            progress("checking", 1, 1)
        return details

    def _place(self, name: str, kind: str, files: Path, source: dict[str, Any], details: dict[str, Any], *,
               staging: Path | None, license: str | None = None, owner: str | None = None) -> InstalledModel:
        """Write the manifest and move the model into place in one rename."""
        if (self.root / name).exists():
            raise ModelInstallError(gettext_noop("a model named {name!r} is installed already; remove it first or "
                                                 "choose another name"), "name_taken", name=name)
        folder = staging if staging is not None else self._staging()
        final = self.root / name
        path = final / "files" if staging is not None else files
        model = InstalledModel(name=name, kind=kind, path=path, source=source, size=folder_size(files),
                               license=license or licence_of(files), installed_at=_now(), details=details,
                               owner=owner)
        manifest = folder / MANIFEST
        manifest.write_text(json.dumps(model.to_dict(), indent=2) + "\n", encoding="utf-8")
        os.rename(folder, final)
        return model


_store: ModelStore | None = None
_store_lock = threading.Lock()


def configure(root: Path | None = None, *, offline: bool = False, max_bytes: int = DEFAULT_MAX_BYTES) -> ModelStore:
    """Set this process's store (the Django app does, from its settings); returns it."""
    global _store
    with _store_lock:
        _store = ModelStore(root or default_root(), offline=offline, max_bytes=max_bytes)
        return _store


def store() -> ModelStore:
    """This process's store: the configured one, else one at ``default_root()`` that honours
    ``TRELLIS_OFFLINE``."""
    global _store
    with _store_lock:
        if _store is None:
            offline = os.environ.get("TRELLIS_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
            _store = ModelStore(default_root(), offline=offline)
        return _store
