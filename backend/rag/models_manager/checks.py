"""What a model folder must hold to be installed, and the check that it loads as its kind."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path, PurePosixPath
from typing import Any

from rag.core.i18n import gettext_noop

from .errors import ModelInstallError
from .safety import abort_guard, check_model_files

logger = logging.getLogger(__name__)

EMBEDDING = "embedding"
CROSS_ENCODER = "cross-encoder"
LLM = "llm"
KINDS = (EMBEDDING, CROSS_ENCODER, LLM)
"""Every kind the manager lists."""
INSTALLABLE_KINDS = (EMBEDDING, CROSS_ENCODER)
"""Kinds it installs: sentence-transformers folders (LLMs come packaged, or as a GGUF path)."""

# Files taken from a hub repository or an archive. Weights only as safetensors: pickled
# weights (.bin, .pt, .ckpt…) can run code when loaded, so they are never taken.
SAFE_SUFFIXES = frozenset({".json", ".txt", ".safetensors", ".model", ".md"})
PICKLE_SUFFIXES = frozenset({".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib"})
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(\n|\Z)", re.S)
_LICENSE = re.compile(r"^license:\s*['\"]?([^'\"\n#]+?)['\"]?\s*$", re.M)


def wanted(relative: str) -> bool:
    """Whether the file at ``relative`` (a POSIX path inside the model folder) is taken."""
    parts = PurePosixPath(relative).parts
    if not parts or any(part.startswith(".") for part in parts):
        return False  # .gitattributes, .cache/ of a previous download…
    return PurePosixPath(relative).suffix.lower() in SAFE_SUFFIXES


def check_files(files: list[str], *, source: str) -> None:
    """Refuse a file list (POSIX paths, after ``wanted``) that cannot be a model Trellis loads.

    Raises
    ------
    ModelInstallError
        ``no_config`` without a top-level config.json, ``no_safetensors`` without safetensors
        weights.
    """
    if "config.json" not in files:
        raise ModelInstallError(gettext_noop("{source} holds no config.json at its top level, so it is not a "
                                             "saved Hugging Face model"), "no_config", source=source)
    if not any(name.endswith(".safetensors") for name in files):
        raise ModelInstallError(gettext_noop("{source} has no safetensors weights; Trellis installs weights only "
                                             "as .safetensors, since pickled weights (.bin, .pt) can run code when "
                                             "they are loaded"), "no_safetensors", source=source)


def licence_of(folder: Path) -> str | None:
    """The ``license:`` of the model card's front matter (README.md), when it has one."""
    readme = folder / "README.md"
    if not readme.is_file():
        return None
    text = readme.read_text(encoding="utf-8", errors="replace")[:20_000]
    front = _FRONT_MATTER.match(text)
    found = _LICENSE.search(front.group(1)) if front else None
    return found.group(1).strip() if found else None


def _architectures(folder: Path) -> list[str]:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ModelInstallError(gettext_noop("its config.json is not valid JSON"), "bad_config") from None
    architectures = config.get("architectures") if isinstance(config, dict) else None
    return [str(name) for name in architectures] if isinstance(architectures, list) else []


def check_loads(kind: str, folder: Path) -> dict[str, Any]:
    """Load the model in ``folder`` as ``kind`` and run it once; returns what was learnt
    (``{"labels": 1}`` for a cross-encoder, ``{"dimension": 384}`` for an embedding model).

    Nothing is downloaded (``local_files_only``), no code shipped with the model runs, and no
    function its files name is imported or called (``safety.check_model_files``, before loading).

    Raises
    ------
    ModelInstallError
        When the folder is not a model of that kind, or does not load.
    """
    architectures = _architectures(folder)
    check_model_files(folder)
    classifier = any(name.endswith("ForSequenceClassification") for name in architectures)
    if kind == CROSS_ENCODER:
        if not classifier:
            raise ModelInstallError(
                gettext_noop("this is not a cross-encoder: its config.json names {architectures}, not a "
                             "sequence-classification model"), "wrong_kind",
                architectures=", ".join(architectures) or "no architecture")
        return _check_cross_encoder(folder)
    if kind == EMBEDDING:
        if classifier:
            raise ModelInstallError(
                gettext_noop("this is not an embedding model: its config.json names {architectures}, a "
                             "classifier (a cross-encoder?)"), "wrong_kind", architectures=", ".join(architectures))
        return _check_embedding(folder)
    raise ModelInstallError(gettext_noop("models of kind {kind} cannot be installed; installable kinds: {kinds}"),
                            "kind_not_installable", kind=kind, kinds=", ".join(INSTALLABLE_KINDS))


def _check_cross_encoder(folder: Path) -> dict[str, Any]:
    try:
        import torch
        from sentence_transformers import CrossEncoder

        with abort_guard():
            # An activation given here is one the model's configuration is never asked for.
            model = CrossEncoder(str(folder), device="cpu", local_files_only=True, trust_remote_code=False,
                                 activation_fn=torch.nn.Identity())
            scores = model.predict([("what does this model score?", "it scores a question and a passage")],
                                   activation_fn=torch.nn.Identity(), convert_to_numpy=True, show_progress_bar=False)
    except ModelInstallError:
        raise
    except Exception as exc:  # transformers raises many types; the log keeps the details
        logger.warning("%s does not load as a cross-encoder", folder, exc_info=True)
        raise ModelInstallError(gettext_noop("it does not load as a cross-encoder ({error}; the server log has the "
                                             "details)"), "does_not_load", error=type(exc).__name__) from exc
    labels = int(scores.reshape(1, -1).shape[1])
    if labels != 1:
        raise ModelInstallError(gettext_noop("it gives {labels} scores per pair; a re-ranking cross-encoder gives one"),
                                "not_a_reranker", labels=labels)
    return {"labels": labels}


def _check_embedding(folder: Path) -> dict[str, Any]:
    try:
        from sentence_transformers import SentenceTransformer

        with abort_guard():
            model = SentenceTransformer(str(folder), device="cpu", local_files_only=True, trust_remote_code=False)
            vectors = model.encode(["what does this model embed?"], convert_to_numpy=True, show_progress_bar=False)
    except ModelInstallError:
        raise
    except Exception as exc:
        logger.warning("%s does not load as an embedding model", folder, exc_info=True)
        raise ModelInstallError(gettext_noop("it does not load as a sentence-transformers embedding model ({error}; "
                                             "the server log has the details)"), "does_not_load",
                                error=type(exc).__name__) from exc
    dimension = int(vectors.reshape(1, -1).shape[1])
    if dimension < 1:
        raise ModelInstallError(gettext_noop("it returns empty vectors"), "does_not_load")
    return {"dimension": dimension}

