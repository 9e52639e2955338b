"""Uploaded files counted as they are read: the first of Django's ``FILE_UPLOAD_HANDLERS``.

Each file's bytes pass through ``LimitedUploadHandler`` on their way to the handlers that store
them (in memory, or in a temporary file). Once a file has passed ``TRELLIS_MAX_UPLOAD_BYTES``,
nothing more of it is handed on and what was stored of it is dropped at once; the rest of it
is only counted. The request then carries an ``OversizedUpload`` in its place: a file with no
content and the size the client sent, which the upload services refuse (``too_large``) with
that size, beside the other files of the same request.
"""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler


class OversizedUpload(UploadedFile):
    """A file larger than the upload limit, of which nothing was kept; ``size`` is its size."""

    oversized = True

    def __init__(self, name: str, content_type: str | None, size: int, charset: str | None) -> None:
        super().__init__(io.BytesIO(), name, content_type, size, charset)


def is_oversized(upload: Any) -> bool:
    return getattr(upload, "oversized", False)


class LimitedUploadHandler(FileUploadHandler):
    """Passes each file's chunks on until the file passes ``TRELLIS_MAX_UPLOAD_BYTES``."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.limit = settings.TRELLIS_MAX_UPLOAD_BYTES
        self.received = 0
        self.cut = False
        # Files the later handlers hold from earlier files of the request (handed over already).
        self.earlier = {id(stored) for stored in self._stored()}

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received <= self.limit:
            return raw_data
        if not self.cut:
            self.cut = True
            self._drop_stored()
        return None  # the handlers after this one get nothing more of this file

    def file_complete(self, file_size: int) -> UploadedFile | None:
        if not self.cut:
            return None  # the next handler hands over the stored file
        return OversizedUpload(self.file_name, self.content_type, file_size, self.charset)

    def _stored(self) -> list[Any]:
        """The files the handlers after this one are writing (Django names them ``file``)."""
        handlers = list(getattr(self.request, "upload_handlers", None) or [])
        later = handlers[handlers.index(self) + 1:] if self in handlers else []
        return [handler.file for handler in later if getattr(handler, "file", None) is not None]

    def _drop_stored(self) -> None:
        """Close what the later handlers stored of this file: a temporary file is deleted."""
        for stored in self._stored():
            if id(stored) not in self.earlier:
                stored.close()
