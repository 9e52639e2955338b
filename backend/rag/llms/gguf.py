"""What a GGUF model file says about its size in memory, read from its header without loading it.

llama.cpp keeps, for every token of a server's context, a key and a value vector per layer and
per key-value head (16-bit floats by default). The header's metadata (``<arch>.block_count``,
``<arch>.attention.head_count_kv``, ``<arch>.attention.key_length``…) gives that size, so the
memory a server will take can be estimated before it is started.
"""

from __future__ import annotations

import functools
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

CACHE_ELEMENT_BYTES = 2
"""llama.cpp's default cache type is f16."""
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_LONGEST_STRING = 1 << 24
_MOST_ENTRIES = 1 << 20


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands."""


@dataclass(frozen=True)
class ModelShape:
    """The memory-relevant facts of one GGUF file; None where its header does not say."""

    file_bytes: int
    cache_bytes_per_token: int | None
    trained_context: int | None


def model_shape(path: Path) -> ModelShape:
    """The shape of the model in ``path`` (cached by path, size and modification time)."""
    stat = os.stat(path)
    return _shape(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _shape(path: str, size: int, modified: int) -> ModelShape:
    try:
        with open(path, "rb") as handle:
            metadata = read_metadata(handle)
    except (OSError, GGUFError, struct.error, UnicodeDecodeError):
        return ModelShape(size, None, None)
    arch = metadata.get("general.architecture")

    def number(key: str) -> int | None:
        value = metadata.get(f"{arch}.{key}")
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None

    layers, heads, width = number("block_count"), number("attention.head_count"), number("embedding_length")
    kv_heads = number("attention.head_count_kv") or heads
    head = width // heads if width and heads else None
    key_length, value_length = number("attention.key_length") or head, number("attention.value_length") or head
    per_token = None
    if layers and kv_heads and key_length and value_length:
        per_token = layers * kv_heads * (key_length + value_length) * CACHE_ELEMENT_BYTES
    return ModelShape(size, per_token, number("context_length"))


def read_metadata(handle: BinaryIO) -> dict[str, Any]:
    """The key-value metadata of a GGUF file (versions 2 and 3); arrays are skipped (None)."""
    if handle.read(4) != b"GGUF":
        raise GGUFError("not a GGUF file")
    version = _unpack(handle, "<I")
    if version not in (2, 3):
        raise GGUFError(f"GGUF version {version} is not supported")
    _tensors, entries = _unpack(handle, "<Q"), _unpack(handle, "<Q")
    if entries > _MOST_ENTRIES:
        raise GGUFError("too many metadata entries")
    metadata: dict[str, Any] = {}
    for _ in range(entries):
        key = _string(handle)
        metadata[key] = _value(handle, _unpack(handle, "<I"))
    return metadata


def _unpack(handle: BinaryIO, layout: str) -> Any:
    size = struct.calcsize(layout)
    data = handle.read(size)
    if len(data) != size:
        raise GGUFError("the header ends early")
    return struct.unpack(layout, data)[0]


def _string(handle: BinaryIO) -> str:
    length = _unpack(handle, "<Q")
    if length > _LONGEST_STRING:
        raise GGUFError("a metadata string is too long")
    return handle.read(length).decode("utf-8")


def _value(handle: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        return _unpack(handle, _SCALARS[kind])
    if kind == _STRING:
        return _string(handle)
    if kind == _ARRAY:
        item, count = _unpack(handle, "<I"), _unpack(handle, "<Q")
        if item in _SCALARS:
            handle.seek(struct.calcsize(_SCALARS[item]) * count, os.SEEK_CUR)
        elif item == _STRING:
            for _ in range(count):
                handle.seek(_unpack(handle, "<Q"), os.SEEK_CUR)
        else:
            raise GGUFError(f"an array of type {item} is not supported")
        return None
    raise GGUFError(f"unknown metadata type {kind}")
