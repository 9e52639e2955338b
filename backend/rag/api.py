"""``RAG``: the engine for scripts and notebooks, over a folder or a list of files.

The creation parameters and the keyword-only overrides of a call follow akasha's ``RAG``:

>>> from rag import RAG
>>> rag = RAG(search_type="hybrid", reranker="local-llm", rerank_top_k=3)
>>> answer = rag("./docs", "How do I build a hybrid retriever?")
>>> rag.docs[0]["text"]            # what the model was given
>>> rag("./docs", "Which presets are there?", rerank_top_k=2, stream=True)  # overrides, streamed
>>> rag.selfask_RAG("./docs", "Which is faster, BM25 or the agentic ensemble, and why?")
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Protocol, cast

from .components import load_components
from .core import ConfigObject, TrellisError, UnknownComponentError, build
from .documents import Chunk, DocumentError, SourceDocument, parse_document
from .documents.chunkers import Chunker
from .embeddings.defaults import DEFAULT_ENGLISH_EMBEDDING
from .embeddings.vector_cache import VectorCache, default_vector_cache_dir
from .llms import ANSWER_LLM, DEFAULT_LLM, LLM
from .locations import engine_data_dir
from .presets import PRESETS
from .retrievers import Hit
from .strategies import Strategy, StrategyError
from .strategies.components.rerankers import CrossEncoderReranker, LLMReranker
from .strategies.slots import Outcome, Reranker
from .strategies.synthesizer import ResponseSynthesizer

RerankFunction = Callable[[str, list[Chunk]], Sequence[Any]]
"""A callable re-ranker: ``(query, documents) -> documents`` reordered (or their indices)."""

DEFAULT_CHUNKER = {"component": "RecursiveCharacterChunker", "params": {}}
DEFAULT_EMBEDDING = DEFAULT_ENGLISH_EMBEDDING
DEFAULT_CROSS_ENCODER = "BAAI/bge-reranker-base"
SEARCH_TYPE_ALIASES = {"auto": "hybrid"}
"""akasha's default first stage is ``auto``; here that is the Hybrid preset."""

SELF_ASK_MAX_QUESTIONS = 3
SELF_ASK_PROMPT = (
    "You prepare a question for answering from documents. Break it into the simpler sub-questions "
    "whose answers together answer it, each one answerable on its own, in the order they should be "
    "answered. A question that is already simple is its own only sub-question. Keep the language of "
    "the question."
)

ALL_PASSAGES = 1000
"""``max_passages`` for "every passage handed over": its largest value."""
ALL_HISTORY_TURNS = 20
"""``history_turns`` for "every turn the caller passes": its largest value."""

_UNSET: Any = object()
"""An override that was not given: the instance's setting holds."""


class ModelNotInstalledError(TrellisError, LookupError):
    """A model a setting names has no local copy; the message says how to install one."""


@dataclass(frozen=True)
class Settings:
    """What ``RAG`` was created with; a call may override any of it."""

    search_type: Any = "auto"
    model: Any = None
    embeddings: Any = None
    chunk_size: int | None = None
    chunker: Mapping[str, Any] | None = None
    reranker: Any = None
    reranker_model: Any = None
    rerank_top_k: int = 5
    max_input_tokens: int | None = None
    stream: bool = False
    use_chroma: bool | str | Path = False
    cache_vectors: bool | str | Path = True
    language: str | None = "en"


class _Reranking(Protocol):
    """A strategy with a ``reranker`` slot (NaiveRAG, MapReduceRAG, CRAG)."""

    reranker: Reranker | None


class CallableReranker(Reranker):
    """A Python function ``(query, documents) -> documents`` as a re-ranker.

    ``documents`` are the candidate chunks (``Chunk``, text in ``.text``), best first; the
    function returns them reordered — all of them, each once — and the best ``top_k`` are kept.
    Returning their indices (a permutation of ``0..n-1``) works too. Anything else, a document
    dropped, added or repeated, is a ``ValueError``.
    """

    NAME = "CallableReranker"

    def __init__(self, function: RerankFunction, top_k: int) -> None:
        super().__init__()
        self.function, self.top_k = function, top_k

    def rerank(self, question: str, hits: Sequence[Hit]) -> Outcome:
        documents = [hit.chunk for hit in hits]
        returned = self.function(question, list(documents))
        order = _permutation(returned, documents)
        return Outcome([hits[index] for index in order[: self.top_k]],
                       {"reranker": getattr(self.function, "__qualname__", "python callable"),
                        "candidates": len(hits)})


def _permutation(returned: Any, documents: Sequence[Chunk]) -> list[int]:
    """The candidates' indices in the order ``returned`` gives them, or a ``ValueError``."""
    try:
        items = list(returned)
    except TypeError:
        raise ValueError(f"the reranker must return the documents reordered, got {returned!r}") from None
    count = len(documents)
    if items and all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        if sorted(items) != list(range(count)):
            raise ValueError(f"the reranker returned indices {items}; they must be a permutation of 0..{count - 1}")
        return items
    index_of = {chunk.id: index for index, chunk in enumerate(documents)}
    order: list[int] = []
    added = []
    for item in items:
        index = index_of.get(item.id) if isinstance(item, Chunk) else None
        if index is None or documents[index] != item:
            added.append(item.id if isinstance(item, Chunk) else repr(item)[:80])
        else:
            order.append(index)
    repeated = sorted({documents[index].id for index in order if order.count(index) > 1})
    dropped = sorted(documents[index].id for index in set(range(count)) - set(order))
    problems = []
    if added:
        problems.append(f"{added} are not among the candidates")
    if repeated:
        problems.append(f"chunks {repeated} appear more than once")
    if dropped:
        problems.append(f"chunks {dropped} are missing")
    if problems:
        raise ValueError("the reranker must return exactly the candidate documents, reordered: "
                         + "; ".join(problems))
    return order


def _strategy_config(config_or_preset: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """A strategy reference from a preset name (or ``"auto"``), a JSON file, a pipeline
    document, a strategy or a retriever reference (wrapped in NaiveRAG)."""
    if isinstance(config_or_preset, (str, Path)) and Path(config_or_preset).suffix == ".json":
        config_or_preset = json.loads(Path(config_or_preset).read_text(encoding="utf-8"))
    if isinstance(config_or_preset, str):
        name = SEARCH_TYPE_ALIASES.get(config_or_preset, config_or_preset)
        presets = {preset.name: preset for preset in PRESETS}
        if name not in presets:
            raise ValueError(f"unknown preset {config_or_preset!r}; search_type is 'auto', a preset "
                             f"({', '.join(presets)}), a pipeline JSON file or a configuration dict")
        return {"component": "NaiveRAG", "params": {"retriever": presets[name].config()}}
    if not isinstance(config_or_preset, Mapping):
        raise ValueError("search_type must be a preset name, a JSON file, or a configuration dict")
    config = copy.deepcopy(dict(config_or_preset))
    if "strategy" in config and "component" not in config:
        config = config["strategy"]
    component = load_components().get(config.get("component", ""))
    if component.KIND == "retriever":
        return {"component": "NaiveRAG", "params": {"retriever": config}}
    return config


def _files(data_source: str | Path | Sequence[str | Path]) -> list[Path]:
    if isinstance(data_source, (str, Path)):
        root = Path(data_source)
        if root.is_dir():
            return sorted(path for path in root.rglob("*") if path.is_file() and not path.name.startswith("."))
        return [root]
    return [Path(item) for item in data_source]


def _llm(value: Any, setting: str, *, local: Mapping[str, Any] = DEFAULT_LLM) -> dict[str, Any] | ConfigObject:
    """An LLM from ``"local"`` (``local``: the packaged model the setting means by it),
    ``"local:<packaged model or .gguf path>"``, a component reference or a built LLM component."""
    if isinstance(value, ConfigObject):
        if value.KIND != "llm":
            raise ValueError(f"{setting} must be a language model; {value.NAME} is a {value.KIND}")
        return value
    if isinstance(value, Mapping):
        return dict(value)
    if value == "local":
        return dict(local)
    if isinstance(value, str) and value.startswith("local:") and len(value) > len("local:"):
        from .llms.local_models import PACKAGED

        name = value.removeprefix("local:")
        if name in PACKAGED:
            return {"component": "LocalLLM", "params": {"model": name}}
        if name.endswith(".gguf") or os.sep in name:
            return {"component": "LocalLLM", "params": {"gguf_path": name}}
        raise ValueError(f"{setting}={value!r}: no packaged model {name!r}; packaged: {', '.join(PACKAGED)} "
                         "(or give the path of a .gguf file)")
    raise ValueError(f"{setting} must be None, 'local', 'local:<model>', a component reference or an LLM "
                     f"component, got {value!r}")


def _embedding(value: Any) -> dict[str, Any]:
    if value is None:
        return dict(DEFAULT_EMBEDDING)
    if isinstance(value, ConfigObject):
        value = value.to_config()
    if isinstance(value, str):
        value = {"component": value, "params": {}}
    if not isinstance(value, Mapping):
        raise ValueError(f"embeddings must be None, an embedding component's name or reference, got {value!r}")
    try:
        component = load_components().get(str(value.get("component", "")))
    except UnknownComponentError as exc:
        raise ValueError(f"embeddings: {exc}") from None
    if component.KIND != "embedding":
        raise ValueError(f"embeddings must name an embedding model; {component.NAME} is a {component.KIND}")
    return {"component": component.NAME, "params": dict(value.get("params", {}))}


def _checked(settings: Settings) -> Settings:
    """``settings`` after the checks that need no files, so mistakes show when they are made."""
    top_k = settings.rerank_top_k
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
        raise ValueError(f"rerank_top_k must be a positive integer, got {top_k!r}")
    for name in ("chunk_size", "max_input_tokens"):
        value = getattr(settings, name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not isinstance(settings.stream, bool):
        raise ValueError(f"stream must be True or False, got {settings.stream!r}")
    if not isinstance(settings.use_chroma, (bool, str, Path)):
        raise ValueError(f"use_chroma must be True, False or a folder, got {settings.use_chroma!r}")
    if not isinstance(settings.cache_vectors, (bool, str, Path)):
        raise ValueError(f"cache_vectors must be True, False or a folder, got {settings.cache_vectors!r}")
    if settings.language is not None and not isinstance(settings.language, str):
        raise ValueError(f"language must be a language code such as 'en' or 'es', or None, got {settings.language!r}")
    _strategy_config(settings.search_type)
    _embedding(settings.embeddings)
    if settings.model is not None:
        _llm(settings.model, "model", local=ANSWER_LLM)
    if settings.reranker_model is not None:
        _llm(settings.reranker_model, "reranker_model")
    _reranker(settings, answer_llm=ANSWER_LLM)
    return settings


def _reranker(settings: Settings, *, answer_llm: Any) -> Reranker | None:
    """The re-ranker ``settings.reranker`` names (None: the pipeline's own, if any).

    ``"llm"``: the LLM re-ranker on ``reranker_model``, else on the answer model. ``"local-llm"``:
    the LLM re-ranker on ``reranker_model``, else on the packaged local LLM. ``"local"`` /
    ``"bge"``: a local sequence-classification re-ranker, ``BAAI/bge-reranker-base``;
    ``"local:<model>"`` / ``"bge:<model>"``: the one named (a hub name with a local copy or a
    folder). A callable: ``CallableReranker``.
    """
    reranker, top_k = settings.reranker, settings.rerank_top_k
    if reranker is None:
        return None
    if callable(reranker) and not isinstance(reranker, ConfigObject):
        return CallableReranker(reranker, top_k)
    if isinstance(reranker, Reranker):
        return reranker
    if reranker in ("llm", "local-llm"):
        if settings.reranker_model is not None:
            llm = _llm(settings.reranker_model, "reranker_model")
        else:
            llm = answer_llm if reranker == "llm" else dict(DEFAULT_LLM)
        return LLMReranker(llm=llm, top_k=top_k)
    prefix, _, named = reranker.partition(":") if isinstance(reranker, str) else ("", "", "")
    model = DEFAULT_CROSS_ENCODER if reranker in ("local", "bge") else named if prefix in ("local", "bge") else ""
    if not model:
        raise ValueError("reranker must be None, 'llm', 'local-llm', 'local' / 'bge', 'local:<model>' / "
                         f"'bge:<model>' or a callable, got {reranker!r}")
    from .retrievers.cross_encoder.retriever import cross_encoder_problem

    problem: str | None = cross_encoder_problem(model)
    if problem:
        if not Path(model).expanduser().is_dir():
            problem = (f"it has no local copy (no package ships re-ranker weights). To install it, run "
                       f"`huggingface-cli download {model}` on a machine with network and copy the Hugging Face "
                       f"cache (~/.cache/huggingface) here, or save the model to a folder and pass "
                       f"reranker='local:<folder>'")
        raise ModelNotInstalledError(
            f"reranker={reranker!r} needs the sequence-classification re-ranker {model}, which is not installed "
            f"here: {problem}. reranker='local-llm' re-ranks offline with the packaged local LLM."
        )
    return CrossEncoderReranker(model_name=model, top_k=top_k)


class RAG:
    """Answers questions over files: load, chunk, embed, retrieve, optionally re-rank, answer.

    Every parameter is a default that a call (``rag(...)``, ``rag.selfask_RAG(...)``) may
    override, keyword-only.

    Parameters
    ----------
    search_type : str, Path or dict, default "auto"
        The first stage: ``"auto"`` (the Hybrid preset), a preset name (``"hybrid"``,
        ``"keyword"``, ``"semantic"``, ``"agentic"``…), a pipeline JSON file, a pipeline document,
        a strategy reference, or a retriever reference (run by NaiveRAG).
    model : str, dict or LLM, optional
        The chat model that writes the answer: ``"local"`` (the packaged Qwen2.5-Coder 1.5B),
        ``"local:<model>"`` (a packaged model such as ``smollm2-135m-instruct``, or a ``.gguf``
        path), a component reference such as ``{"component": "OpenAICompatibleLLM", "params":
        {...}}``, or a built LLM component. None: the pipeline's own (the local 1.5B by default).
    embeddings : str or dict, optional
        The embedding model for documents and questions of dense retrievers without a model of
        their own: a component name (``"AllMiniLML6V2Embedding"``,
        ``"MultilingualE5SmallEmbedding"``…) or reference. None: all-MiniLM-L6-v2.
    chunk_size : int, optional
        The chunker's size (characters for the default chunker, whose default is 1000).
    chunker : dict, optional
        A chunker component reference; default the recursive character splitter.
    reranker : None, str, callable or Reranker, optional
        The second stage: ``"llm"``, ``"local-llm"``, ``"local"`` / ``"bge"``,
        ``"local:<model>"`` / ``"bge:<model>"``, or a callable ``(query, documents) -> documents``
        (see ``CallableReranker``). None: no re-ranking (beyond the pipeline's own re-ranker).
    reranker_model : str, dict or LLM, optional
        The chat model of the LLM re-ranker, in ``model``'s forms; None: the answer model for
        ``"llm"``, the packaged local 0.5B for ``"local-llm"`` (``"local"`` names it here too).
        Loaded only when that re-ranker runs.
    rerank_top_k : int, default 5
        How many re-ranked documents are kept and given to the answer model; a positive integer.
        Without a re-ranker it has no effect.
    max_input_tokens : int, optional
        The answer's input budget in tokens (the pipeline's, 3000 by default).
    stream : bool, default False
        Return the answer as an iterator of text pieces.
    use_chroma : bool, str or Path, default False
        Keep the dense vectors of the files in a persistent Chroma store (True:
        ``$TRELLIS_DATA_DIR/chroma``, else ``~/.cache/trellis/chroma``; or the folder given), so a
        later run over the same files, in any process, embeds only the question.
    cache_vectors : bool, str or Path, default True
        Without Chroma, keep each file's dense vectors on disk (True:
        ``$TRELLIS_DATA_DIR/vectors``, else ``~/.cache/trellis/vectors``; or the folder
        given), so a later run embeds only the files that changed; False embeds every run.
    language : str or None, default "en"
        The files' language (``"en"``, ``"es"``, ``"zh-Hant"``, ``"multilingual"``), as a
        knowledge base's: keyword retrievers stemming in ``"auto"`` (the Hybrid preset's) stem
        English and Spanish and leave other languages, and None, as written.

    Attributes
    ----------
    docs : list of dict
        The chunks the answer model was given in the last call (``text``, ``chunk_id``,
        ``metadata``…): with a re-ranker, the ``rerank_top_k`` it kept; without one, every chunk
        the first stage retrieved; in both cases as many as fit in ``max_input_tokens``.
    state : dict
        The last run's final state, its trace included.
    skipped : list of (str, str)
        Files that could not be read, with the reason.
    """

    def __init__(
        self,
        search_type: str | Path | Mapping[str, Any] = "auto",
        *,
        model: Any = None,
        embeddings: Any = None,
        chunk_size: int | None = None,
        chunker: Mapping[str, Any] | None = None,
        reranker: Any = None,
        reranker_model: Any = None,
        rerank_top_k: int = 5,
        max_input_tokens: int | None = None,
        stream: bool = False,
        use_chroma: bool | str | Path = False,
        cache_vectors: bool | str | Path = True,
        language: str | None = "en",
    ) -> None:
        self.settings = _checked(Settings(
            search_type=search_type, model=model, embeddings=embeddings, chunk_size=chunk_size, chunker=chunker,
            reranker=reranker, reranker_model=reranker_model, rerank_top_k=rerank_top_k,
            max_input_tokens=max_input_tokens, stream=stream, use_chroma=use_chroma,
            cache_vectors=cache_vectors, language=language,
        ))
        self.docs: list[dict[str, Any]] = []
        self.state: dict[str, Any] = {}
        self.skipped: list[tuple[str, str]] = []
        self._corpus_key: tuple[Any, ...] | None = None
        self._corpus: tuple[dict[int, dict[int, Chunk]], dict[int, SourceDocument]] | None = None
        self._corpus_fingerprint = ""
        self._built: tuple[tuple[Any, ...], Strategy, Any] | None = None

    @property
    def config(self) -> dict[str, Any]:
        """The strategy reference the settings describe (model and budget applied)."""
        return self._pipeline(self.settings)

    # -- calls ------------------------------------------------------------------------------

    def __call__(
        self,
        data_source: str | Path | Sequence[str | Path],
        prompt: str,
        *,
        search_type: Any = _UNSET,
        model: Any = _UNSET,
        embeddings: Any = _UNSET,
        chunk_size: Any = _UNSET,
        chunker: Any = _UNSET,
        reranker: Any = _UNSET,
        reranker_model: Any = _UNSET,
        rerank_top_k: Any = _UNSET,
        max_input_tokens: Any = _UNSET,
        stream: Any = _UNSET,
        use_chroma: Any = _UNSET,
        cache_vectors: Any = _UNSET,
        language: Any = _UNSET,
        history: Sequence[dict[str, str]] = (),
    ) -> str | Iterator[str]:
        """The answer to ``prompt`` over ``data_source`` (a folder, a file or a list of files).

        Every creation parameter may be overridden for this call, keyword-only. Returns the
        answer, or with ``stream`` an iterator of its text pieces; ``docs`` then holds what the
        model was given.

        Raises
        ------
        ValueError
            For a setting that cannot work, and when a re-ranker gives no usable order (an LLM's
            malformed or incomplete order once its retries are spent, a callable's answer that is
            not exactly the candidates).
        """
        settings = self._settings(locals())
        strategy = self._strategy(data_source, settings)
        if settings.stream:
            return self._stream(strategy, prompt, history)
        self._run(strategy, prompt, history)
        return self.state["response"]

    def selfask_RAG(
        self,
        data_source: str | Path | Sequence[str | Path],
        prompt: str,
        *,
        search_type: Any = _UNSET,
        model: Any = _UNSET,
        embeddings: Any = _UNSET,
        chunk_size: Any = _UNSET,
        chunker: Any = _UNSET,
        reranker: Any = _UNSET,
        reranker_model: Any = _UNSET,
        rerank_top_k: Any = _UNSET,
        max_input_tokens: Any = _UNSET,
        stream: Any = _UNSET,
        use_chroma: Any = _UNSET,
        cache_vectors: Any = _UNSET,
        language: Any = _UNSET,
    ) -> str | Iterator[str]:
        """Self-ask: break ``prompt`` into sub-questions, answer each from retrieval, then answer
        ``prompt`` with those answers in view (and its own retrieval).

        The answer model breaks the question into at most three sub-questions (a simple question
        is its own); each is answered by the pipeline like a call would; the last run answers the
        question with the sub-questions and their answers as the conversation so far.
        ``state["self_ask"]`` holds the sub-questions, their answers and chunks; ``docs`` what
        the final answer was given. Overrides as for a call; ``stream`` streams the final answer.
        """
        settings = self._settings(locals())
        strategy = self._strategy(data_source, settings)
        questions, details = self._decompose(strategy, prompt)
        history: list[dict[str, str]] = []
        steps = []
        for question in questions:
            self._run(strategy, question, ())
            steps.append({"question": question, "answer": self.state["response"], "docs": self.docs})
            history += [{"role": "user", "content": question}, {"role": "assistant", "content": self.state["response"]}]
        details["steps"] = steps
        if settings.stream:
            return self._stream(strategy, prompt, history, self_ask=details)
        self._run(strategy, prompt, history)
        self.state["self_ask"] = details
        return self.state["response"]

    # -- building ---------------------------------------------------------------------------

    def strategy(self, data_source: str | Path | Sequence[str | Path], **overrides: Any) -> Strategy:
        """The built strategy over ``data_source`` with the settings (and ``overrides``), the
        re-ranker in place. Files are parsed and chunked once, and the built pipeline is kept,
        while neither the files nor the settings change."""
        return self._strategy(data_source, self._settings(overrides))

    def _strategy(self, data_source: str | Path | Sequence[str | Path], settings: Settings) -> Strategy:
        chunks, documents = self._load(data_source, self._chunker(settings))
        pipeline = self._pipeline(settings)
        embedding = _embedding(settings.embeddings)
        model = settings.model if isinstance(settings.model, LLM) else None
        key = (self._corpus_key, json.dumps(pipeline, sort_keys=True), json.dumps(embedding, sort_keys=True),
               str(settings.use_chroma), str(settings.cache_vectors), settings.language, id(model))
        if self._built is None or self._built[0] != key:
            stores = self._stores(settings, embedding)
            strategy = build(pipeline, kind=Strategy, registry=load_components(),
                             infra={"chunks": chunks, "documents": documents, "persistence": stores,
                                    "language": settings.language})
            if model is not None:
                synthesizer = getattr(strategy, "response_synthesizer", None)
                if not isinstance(synthesizer, ResponseSynthesizer):
                    raise ValueError(f"{strategy.NAME} has no response synthesizer to answer with the model given")
                synthesizer.llm = model
            if isinstance(stores, PersistentVectors):
                stores.fill(strategy, chunks)
            self._built = (key, strategy, getattr(strategy, "reranker", None))
        _, strategy, own_reranker = self._built
        chosen = _reranker(settings, answer_llm=self._answer_llm(strategy))
        if chosen is not None and "reranker" not in strategy.slots():
            raise ValueError(f"{strategy.NAME} has no re-ranking step")
        if "reranker" in strategy.slots():
            cast(_Reranking, strategy).reranker = chosen if chosen is not None else own_reranker
        return strategy

    def _settings(self, given: Mapping[str, Any]) -> Settings:
        names = {field.name for field in fields(Settings)}
        changes = {name: value for name, value in given.items() if name in names and value is not _UNSET}
        unknown = set(given) - names - {"self", "data_source", "prompt", "history"}
        if unknown:
            raise TypeError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        return _checked(replace(self.settings, **changes)) if changes else self.settings

    def _pipeline(self, settings: Settings) -> dict[str, Any]:
        config = _strategy_config(settings.search_type)
        component = load_components().get(config["component"])
        has_synthesizer = "response_synthesizer" in component.slots()
        if (settings.model is not None or settings.max_input_tokens is not None) and not has_synthesizer:
            raise ValueError(f"model and max_input_tokens set the answer's model and budget; {component.NAME} has no "
                             "response synthesizer of its own (set them in its branches)")
        if not has_synthesizer:
            return config
        changes: dict[str, Any] = {}
        if settings.model is not None and not isinstance(settings.model, ConfigObject):
            changes["llm"] = _llm(settings.model, "model", local=ANSWER_LLM)
        if settings.max_input_tokens is not None:
            changes["max_input_tokens"] = settings.max_input_tokens
        params = config.setdefault("params", {})
        synthesizer = params.get("response_synthesizer") or {"component": "ResponseSynthesizer", "params": {}}
        own = synthesizer.get("params", {})
        # akasha's promise: the model is given every document the first stage (or the re-ranker,
        # its rerank_top_k) hands over, within max_input_tokens; a pipeline's own count stands.
        passages = {} if own.get("max_passages") is not None else {"max_passages": ALL_PASSAGES}
        # The caller chooses the history it passes (self-ask passes its sub-answers): the model
        # reads all of it, up to the synthesizer's largest count, unless the pipeline sets one.
        if own.get("history_turns") is None:
            passages["history_turns"] = ALL_HISTORY_TURNS
        params["response_synthesizer"] = {**synthesizer, "params": {**own, **passages, **changes}}
        return config

    @staticmethod
    def _answer_llm(strategy: Strategy) -> Any:
        synthesizer = getattr(strategy, "response_synthesizer", None)
        if synthesizer is not None:
            return synthesizer.llm
        return dict(ANSWER_LLM)

    @staticmethod
    def _chunker(settings: Settings) -> dict[str, Any]:
        chunker = copy.deepcopy(dict(settings.chunker or DEFAULT_CHUNKER))
        if settings.chunk_size is not None:
            params = chunker.setdefault("params", {})
            params["chunk_size"] = settings.chunk_size
            overlap = load_components().get(chunker["component"]).Params.model_fields.get("chunk_overlap")
            if overlap is not None and "chunk_overlap" not in params:
                params["chunk_overlap"] = min(int(overlap.default), settings.chunk_size // 10)
        return chunker

    def _stores(self, settings: Settings, embedding: dict[str, Any]) -> Any:
        if settings.use_chroma is False:
            if settings.cache_vectors is False:
                return InMemoryStores(embedding)
            cache = (Path(settings.cache_vectors) if not isinstance(settings.cache_vectors, bool)
                     else default_vector_cache_dir())
            return InMemoryStores(embedding, VectorCache(cache))
        folder = Path(settings.use_chroma) if not isinstance(settings.use_chroma, bool) else default_chroma_dir()
        return PersistentVectors(embedding, folder, self._corpus_fingerprint)

    def _load(self, data_source: str | Path | Sequence[str | Path], chunker_config: dict[str, Any]):
        files = _files(data_source)
        key = (tuple((str(path), path.stat().st_mtime_ns, path.stat().st_size) for path in files if path.exists()),
               json.dumps(chunker_config, sort_keys=True))
        if key == self._corpus_key and self._corpus is not None:
            return self._corpus
        chunker = build(chunker_config, kind=Chunker, registry=load_components())
        chunks: dict[int, dict[int, Chunk]] = {}
        documents: dict[int, SourceDocument] = {}
        skipped = []
        digest = hashlib.sha256(key[1].encode())
        next_id = 1
        for document_id, path in enumerate(files, start=1):
            try:
                data = path.read_bytes()
                parsed = parse_document(data, path.name)
            except (DocumentError, OSError) as exc:
                skipped.append((str(path), str(exc)))
                continue
            digest.update(f"{path}\0{hashlib.sha256(data).hexdigest()}\0".encode())
            documents[document_id] = SourceDocument(document_id, path.name, parsed.mime)
            chunks[document_id] = {}
            for draft in chunker.split(parsed.sections):
                chunks[document_id][draft.position] = Chunk(next_id, document_id, draft.position, draft.text,
                                                            draft.metadata)
                next_id += 1
        self.skipped = skipped
        if not chunks:
            reasons = "; ".join(f"{name}: {reason}" for name, reason in skipped) or "no files"
            raise ValueError(f"no usable document in {data_source!r} ({reasons})")
        self._corpus_key, self._corpus = key, (chunks, documents)
        self._corpus_fingerprint = digest.hexdigest()
        return self._corpus

    # -- running ----------------------------------------------------------------------------

    def _run(self, strategy: Strategy, prompt: str, history: Sequence[dict[str, str]]) -> None:
        try:
            self.state = strategy.run(prompt, history=history)
        except StrategyError as exc:
            self.state = exc.state
            self.docs = self.state.get("chunks_sent", [])
            if isinstance(exc.__cause__, ValueError):
                raise exc.__cause__ from None  # the caller's mistake or an unusable re-ranking, not a crash
            raise
        self.docs = self.state["chunks_sent"]

    def _stream(self, strategy: Strategy, prompt: str, history: Sequence[dict[str, str]],
                self_ask: dict[str, Any] | None = None) -> Iterator[str]:
        for event in strategy.stream(prompt, history=history):
            if event["type"] == "generation.delta":
                yield event["text"]
            elif event["type"] in ("answer.completed", "run.failed"):
                self.state = event["state"]
                if self_ask is not None:
                    self.state["self_ask"] = self_ask
                self.docs = self.state.get("chunks_sent", [])
                if event["type"] == "run.failed":
                    if isinstance(event.get("exception"), ValueError):
                        raise event["exception"]
                    raise StrategyError(event["error"], event["state"])

    def _decompose(self, strategy: Strategy, prompt: str) -> tuple[list[str], dict[str, Any]]:
        """The sub-questions of ``prompt`` by the answer model; ``[prompt]`` when it gives none."""
        llm = self._answer_llm(strategy)
        schema = {
            "type": "object",
            "properties": {"questions": {"type": "array", "items": {"type": "string", "minLength": 1},
                                         "minItems": 1, "maxItems": SELF_ASK_MAX_QUESTIONS}},
            "required": ["questions"],
            "additionalProperties": False,
        }
        messages = [{"role": "system", "content": SELF_ASK_PROMPT},
                    {"role": "user", "content": f"Question: {prompt}\n\nReturn {{\"questions\": [...]}} with 1 to "
                                                f"{SELF_ASK_MAX_QUESTIONS} sub-questions."}]

        def problems(answer: dict[str, Any]) -> list[str]:
            found = []
            seen = set()
            for index, question in enumerate(answer["questions"]):
                key = " ".join(question.casefold().split())
                if not key:
                    found.append(f"questions[{index}] is empty")
                elif key in seen:
                    found.append(f"questions[{index}] repeats an earlier sub-question")
                seen.add(key)
            return found

        arguments, attempts = llm.call_function_with_retries(
            messages, schema, check=problems, max_trials=3, name="sub_questions",
            description="the sub-questions to answer first",
        )
        details: dict[str, Any] = {"attempts": [attempt.to_dict() for attempt in attempts]}
        if arguments is None:
            details["fallback"] = (f"the model gave no usable sub-questions after {len(attempts)} attempt(s); "
                                   "answering the question as asked")
            questions = [prompt]
        else:
            questions = [question.strip() for question in arguments["questions"]]
        details["questions"] = questions
        return questions, details


class InMemoryStores:
    """What retrievers get without a knowledge base: the default embedding model, and where
    document vectors are kept between runs, if anywhere (dense retrievers then search the
    chunks in memory; BM25 indexes them in memory)."""

    def __init__(self, default_embedding: dict[str, Any], vector_cache: VectorCache | None = None) -> None:
        self.default_embedding = default_embedding
        self.vector_cache = vector_cache


def default_chroma_dir() -> Path:
    """Where ``use_chroma=True`` keeps vectors: ``$TRELLIS_DATA_DIR/chroma``, else
    ``~/.cache/trellis/chroma``."""
    return engine_data_dir() / "chroma"


class PersistentVectors(InMemoryStores):
    """Dense vectors of one set of files in a persistent Chroma store, one collection per
    embedding model and metric, named after the files' contents and the chunker (so the same
    files chunked the same way find their vectors again, and changed files get new ones)."""

    def __init__(self, default_embedding: dict[str, Any], folder: Path, fingerprint: str) -> None:
        from .stores.chroma import ChromaStore

        super().__init__(default_embedding)
        self.store = ChromaStore(path=folder)
        self.corpus = int(fingerprint[:15], 16)

    def vectors(self, model_key: str, metric: str = "cosine") -> Any:
        return self.store.collection(self.corpus, model_key, metric)

    def fill(self, component: ConfigObject, chunks: Mapping[int, Mapping[int, Chunk]]) -> None:
        """Embed and store the chunks each dense retriever of the tree lacks a vector for."""
        from .retrievers.dense import DenseEmbeddingRetriever

        if isinstance(component, DenseEmbeddingRetriever):
            embedder = component.embedder()
            collection = self.vectors(embedder.model_key, component.params.similarity_metric)
            stored = collection.chunk_ids()
            missing = [chunk for positions in chunks.values() for chunk in positions.values() if chunk.id not in stored]
            if missing:
                collection.upsert([chunk.id for chunk in missing], embedder.embed_documents([c.text for c in missing]),
                                  [{"document_id": c.document_id, "position": c.position} for c in missing])
        for child in component.sub_components():
            self.fill(child, chunks)
