"""A model's files are data: what they may name, checked before any loader reads them.

sentence-transformers imports and calls dotted names written in a model's JSON files: a
``Dense`` module's ``activation_function`` (``2_Dense/config.json``), a cross-encoder's
``activation_fn`` (``config.json``'s ``sentence_transformers`` section, or
``config_sentence_transformers.json``) and the module classes of ``modules.json``. A name like
``os.abort`` or ``torch.distributed.run.main`` there runs when the model loads. So every such
name is checked first against fixed allow-lists: the activations a model may ask for, and the
module classes Trellis loads. ``trust_remote_code`` (administrators only) also lets custom
module classes in, never another activation.

Loading may still raise what is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``),
which would end the worker thread that loads; ``abort_guard`` turns it into an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from rag.core.i18n import gettext_noop

from .errors import ModelInstallError

_ACTIVATION_CLASSES = ("CELU", "ELU", "GELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
                       "Mish", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softplus", "Softsign", "Tanh",
                       "Tanhshrink")
ALLOWED_ACTIVATIONS = frozenset(
    [f"torch.nn.modules.activation.{name}" for name in _ACTIVATION_CLASSES]
    + [f"torch.nn.{name}" for name in _ACTIVATION_CLASSES]
    + ["torch.nn.modules.linear.Identity", "torch.nn.Identity"]
)
"""The activations a model's files may name (as the dotted names sentence-transformers saves)."""

_MODULE_CLASSES = {
    "Transformer": "sentence_transformers.base.modules.transformer",
    "Pooling": "sentence_transformers.sentence_transformer.modules.pooling",
    "Dense": "sentence_transformers.base.modules.dense",
    "Normalize": "sentence_transformers.base.modules.normalize",
    "LayerNorm": "sentence_transformers.sentence_transformer.modules.layer_norm",
    "WeightedLayerPooling": "sentence_transformers.sentence_transformer.modules.weighted_layer_pooling",
    "StaticEmbedding": "sentence_transformers.sentence_transformer.modules.static_embedding",
    "LogitScore": "sentence_transformers.cross_encoder.modules.logit_score",
}
_MODULE_PACKAGES = ("sentence_transformers.models", "sentence_transformers.sentence_transformer.modules",
                    "sentence_transformers.base.modules", "sentence_transformers.cross_encoder.modules")
ALLOWED_MODULE_TYPES = frozenset(
    [f"{module}.{name}" for name, module in _MODULE_CLASSES.items()]
    + [f"{package}.{name}" for package in _MODULE_PACKAGES for name in _MODULE_CLASSES]
)
"""The ``modules.json`` types loaded without ``trust_remote_code``: sentence-transformers' own
modules that import nothing a file names (a ``Router`` or ``WordEmbeddings`` would)."""

CALLABLE_KEYS = frozenset({"activation_function", "activation_fn", "sbert_ce_default_activation_function"})
"""Keys whose value a loader imports and calls, wherever they sit in a model's JSON files."""

MAX_CONFIG_BYTES = 4 * 1024 ** 2
"""A configuration file larger than this is refused rather than read."""
_CONFIG_FILES = frozenset({"config.json", "config_sentence_transformers.json", "modules.json",
                           "sentence_bert_config.json"})
_DATA_FILES = frozenset({"tokenizer.json", "vocab.json"})
_MAX_DEPTH = 64
ACTIVATION_NAMES = ", ".join(sorted({name.rsplit(".", 1)[1] for name in ALLOWED_ACTIVATIONS}))


class ModelLoadAborted(ModelInstallError):
    """Loading raised what is not an ``Exception`` (``SystemExit``…): a failure like any other."""


def _refused(file: str, key: str, name: object) -> ModelInstallError:
    return ModelInstallError(
        gettext_noop("{file} names {name} as its {key}; a model's files may name only these activations: "
                     "{allowed} (Trellis never runs a function a model's files name)"),
        "names_code", file=file, key=key, name=repr(name)[:200], allowed=ACTIVATION_NAMES)


def model_files_problem(folder: Path, *, trust_remote_code: bool = False) -> ModelInstallError | None:
    """Why loading the model in ``folder`` would import or call a name its files give, or None.

    Reads every JSON file of the folder (but the tokenizer's vocabulary): a callable key
    (``CALLABLE_KEYS``) must hold an allowed activation (``ALLOWED_ACTIVATIONS``) or null, and
    ``modules.json`` may list only ``ALLOWED_MODULE_TYPES``, unless ``trust_remote_code``.
    """
    folder = Path(folder)
    for path in sorted(folder.rglob("*.json")):
        try:
            size = path.stat().st_size
        except OSError:
            continue
        problem = json_file_problem(path.relative_to(folder).as_posix(), size, path.read_bytes,
                                    trust_remote_code=trust_remote_code)
        if problem is not None:
            return problem
    return None


def json_file_problem(relative: str, size: int, read: Callable[[], bytes], *,
                      trust_remote_code: bool = False) -> ModelInstallError | None:
    """``model_files_problem`` for one file of a model folder: its POSIX path inside the folder,
    its size, and how to read it (a file on disk, or an entry of an archive)."""
    parts = PurePosixPath(relative).parts
    if not parts or parts[-1] in _DATA_FILES or any(part.startswith(".") for part in parts):
        return None
    if size > MAX_CONFIG_BYTES:
        if parts[-1] in _CONFIG_FILES:
            return ModelInstallError(gettext_noop("{file} is larger than {limit} MB, too large for a configuration "
                                                  "file"), "config_too_large", file=relative,
                                     limit=MAX_CONFIG_BYTES // 1024 ** 2)
        return None
    try:
        data = json.loads(read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        if parts[-1] in _CONFIG_FILES:
            return ModelInstallError(gettext_noop("{file} is not valid JSON"), "bad_config", file=relative)
        return None
    problem = _callables_problem(data, relative)
    if problem is None and relative == "modules.json" and not trust_remote_code:
        problem = _modules_problem(data, relative)
    return problem


def check_model_files(folder: Path, *, trust_remote_code: bool = False) -> None:
    """Raise ``model_files_problem``'s ``ModelInstallError``, if any."""
    problem = model_files_problem(folder, trust_remote_code=trust_remote_code)
    if problem is not None:
        raise problem


def _callables_problem(data: Any, file: str) -> ModelInstallError | None:
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > _MAX_DEPTH:
            return ModelInstallError(gettext_noop("{file} nests deeper than a configuration file does"),
                                     "bad_config", file=file)
        if isinstance(value, dict):
            for key, item in value.items():
                if key in CALLABLE_KEYS and item is not None and item not in ALLOWED_ACTIVATIONS:
                    return _refused(file, key, item)
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return None


def _modules_problem(data: Any, file: str) -> ModelInstallError | None:
    entries = data if isinstance(data, list) else [data]
    for entry in entries:
        kind = entry.get("type") if isinstance(entry, dict) else entry
        if kind not in ALLOWED_MODULE_TYPES:
            return ModelInstallError(
                gettext_noop("{file} lists the module {name}, which Trellis does not load: only "
                             "sentence-transformers' Transformer, Pooling, Dense, Normalize, LayerNorm, "
                             "WeightedLayerPooling, StaticEmbedding and LogitScore modules are loaded, since "
                             "others import code the model's files name"),
                "names_code", file=file, name=repr(kind)[:200])
    return None


def hub_snapshot_folder(repo_id: str) -> Path | None:
    """The folder of ``repo_id`` in the local Hugging Face cache (read from disk only), or None."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id, local_files_only=True))
    except Exception:  # not cached, or an id the hub would refuse
        return None


@contextlib.contextmanager
def abort_guard() -> Iterator[None]:
    """Run a model's loading so that what it raises is an ``Exception``: ``SystemExit``,
    ``KeyboardInterrupt`` and the like become ``ModelLoadAborted``, which the caller's error
    handling then reports, instead of ending the thread (a job worker) that loads."""
    try:
        yield
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as exc:  # noqa: B036 - the point: a model may raise anything while loading
        raise ModelLoadAborted(gettext_noop("loading it raised {error}, which would have stopped the server's "
                                            "worker; the model is refused"), "load_aborted",
                               error=type(exc).__name__) from exc
