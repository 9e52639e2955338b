"""``manage.py models list|install|remove``: the model manager from a terminal."""

from __future__ import annotations

import json
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.i18n import translate
from rag.core import ConfigValidationError
from rag.models_manager import INSTALLABLE_KINDS, KINDS

from ... import selectors, services
from ...models import ModelInstall


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return str(size)


class Command(BaseCommand):
    help = (
        "List the models this machine can run, install one from the Hugging Face Hub (honouring HF_ENDPOINT; "
        "refused with TRELLIS_OFFLINE=1), a .zip of a model folder or a local folder (used in place unless --copy), "
        "or remove an installed one. An installed model is named in pipelines by its name, e.g. "
        'SentenceTransformerCrossEncoderRetriever(model_name="tiny-ce").'
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="list|install|remove")
        listing = actions.add_parser("list", help="The packaged and installed models, by kind.")
        listing.add_argument("--kind", choices=KINDS)
        listing.add_argument("--json", action="store_true", help="Print one JSON array.")
        install = actions.add_parser("install", help="Install a model and check that it loads as --kind.")
        install.add_argument("source", help="A hub model id (org/name), a .zip of a model folder, or a folder.")
        install.add_argument("--kind", required=True, choices=INSTALLABLE_KINDS)
        install.add_argument("--name", default="", help="What pipelines will name it (default: the last part of "
                                                        "the id, the file name or the folder name).")
        install.add_argument("--revision", default="", help="Hub installs: a branch, tag or commit (default main).")
        install.add_argument("--copy", action="store_true", help="Folder installs: copy the files into the model "
                                                                 "store instead of using the folder in place.")
        remove = actions.add_parser("remove", help="Remove an installed model.")
        remove.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"_{options['action']}")(options)

    # -- list -------------------------------------------------------------------------------

    def _list(self, options: dict[str, Any]) -> None:
        models = selectors.model_list(kind=options.get("kind"))
        if options["json"]:
            self.stdout.write(json.dumps(models, indent=2, ensure_ascii=False))
            return
        for kind in KINDS:
            rows = [model for model in models if model["kind"] == kind]
            if options.get("kind") not in (None, kind):
                continue
            self.stdout.write(kind)
            if not rows:
                self.stdout.write("  none installed" + (
                    " (manage.py models install <hub id|zip|folder> --kind cross-encoder)" if kind == "cross-encoder" else ""))
            for model in rows:
                enables = ", ".join(model["enables"]["components"]) or "—"
                if model["enables"]["presets"]:
                    enables += f"; presets {', '.join(model['enables']['presets'])}"
                source = f"{model['source']}: {model['source_detail']}"
                self.stdout.write(f"  {model['name']:<28} {_size(model['size']):>10}  {model['license'] or '—':<12} "
                                  f"{source}  → {enables}")

    # -- install ----------------------------------------------------------------------------

    def _install(self, options: dict[str, Any]) -> None:
        reference, kind, name = options["source"], options["kind"], options["name"] or None
        path = Path(reference).expanduser()
        try:
            if path.is_file():
                if not zipfile.is_zipfile(path):
                    raise CommandError(f"{path} is a file but not a .zip archive of a model folder")
                upload = SimpleUploadedFile(path.name, path.read_bytes(), content_type="application/zip")
                install = services.model_install_upload(owner=None, kind=kind, upload=upload, name=name, queue=False)
            elif path.is_dir():
                install = services.model_install_request(owner=None, source=ModelInstall.Source.FOLDER, kind=kind,
                                                         reference=str(path), name=name, copy=options["copy"],
                                                         queue=False)
            else:
                install = services.model_install_request(owner=None, source=ModelInstall.Source.HUB, kind=kind,
                                                         reference=reference, name=name,
                                                         revision=options["revision"], queue=False)
        except ConfigValidationError as exc:
            raise CommandError("; ".join(f"{error.path}: {error.message}" for error in exc.errors)) from None
        self.stdout.write(f"Installing {install.name} ({install.kind}) from {install.source} {install.reference}…")
        started = time.monotonic()
        self._inline = False
        try:
            finished = services.model_install_run(install_id=install.pk, echo=self._progress)
        except KeyboardInterrupt:
            ModelInstall.objects.filter(pk=install.pk).update(
                status=ModelInstall.Status.FAILED, error="interrupted", error_code="interrupted")
            raise CommandError("interrupted; run the command again (a hub download resumes)") from None
        assert finished is not None
        if finished.status != ModelInstall.Status.READY:
            raise CommandError(translate(finished.error_template, finished.error_context, "en",
                                         fallback=finished.error))
        self.stdout.write(self.style.SUCCESS(
            f"Installed {finished.name} ({finished.kind}, {_size(finished.size)}) in {time.monotonic() - started:.1f} s; "
            f"pipelines name it {finished.name!r}."))

    def _progress(self, stage: str, done: int, total: int) -> None:
        if stage == "checking":
            if done == 0:
                self.stdout.write(("\n" if self._inline else "") + "checking that it loads…")
                self._inline = False
            return
        if not sys.stdout.isatty():
            return
        share = f"{100 * done / total:5.1f}%" if total else ""
        self.stdout.write(f"\r{stage} {_size(done)} of {_size(total)} {share}", ending="")
        self._inline = True

    # -- remove -----------------------------------------------------------------------------

    def _remove(self, options: dict[str, Any]) -> None:
        try:
            removed = services.model_remove(name=options["name"])
        except ConfigValidationError as exc:
            raise CommandError("; ".join(error.message for error in exc.errors)) from None
        self.stdout.write(f"Removed {removed.name} ({removed.kind}).")
