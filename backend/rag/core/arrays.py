"""Reading NumPy's ``.npy`` and ``.npz`` files safely from several threads at once.

NumPy parses each array header with ``ast.literal_eval``. On CPython 3.11 before 3.11.8 the AST
constructor keeps its recursion depth per interpreter, not per thread, so two threads parsing
at once can fail with "SystemError: AST constructor recursion depth mismatch" (cpython
gh-106905). Headers are a few dozen bytes, so reading them one at a time costs nothing
measurable; the array data is read inside the same lock because ``.npz`` members parse their
header only when first accessed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import BinaryIO

import numpy as np

_HEADER_PARSING = threading.Lock()


def load_npy(source: str | Path | BinaryIO) -> np.ndarray:
    """One array from a ``.npy`` file; never unpickles."""
    with _HEADER_PARSING:
        return np.load(source, allow_pickle=False)


def load_npz(source: str | Path | BinaryIO, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The named arrays of a ``.npz`` archive, read eagerly; never unpickles.

    Raises ``KeyError`` for a name the archive lacks, and NumPy's ``ValueError``/``OSError``
    (or ``zipfile.BadZipFile``) for a damaged one.
    """
    with _HEADER_PARSING, np.load(source, allow_pickle=False) as archive:
        return {name: archive[name] for name in names}
