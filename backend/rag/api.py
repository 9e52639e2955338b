"""``RAG``: the engine for scripts and notebooks, over a folder or a list of files.

>>> from rag import RAG
>>> rag = RAG("hybrid")
>>> answer = rag("./docs", "How do I build a hybrid retriever?")
>>> rag.docs[0]["text"]            # what the model was given
>>> for text in rag("./docs", "and its defaults?", stream=True): print(text, end="")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .components import load_components
from .core import build
from .documents import Chunk, DocumentError, SourceDocument, parse_document
from .presets import PRESETS
from .retrievers import Hit
from .strategies import Strategy, StrategyError
from .strategies.slots import Outcome, Reranker

RerankFunction = Callable[[str, list[str]], Sequence[int]]
DEFAULT_CHUNKER = {"component": "RecursiveCharacterChunker", "params": {}}
DEFAULT_EMBEDDING = {"component": "AllMiniLML6V2Embedding", "params": {}}


class InMemoryStores:
    """What retrievers get without a knowledge base: only the default embedding model (dense
    retrievers then embed the chunks in memory; BM25 indexes them in memory)."""

    def __init__(self, default_embedding: dict[str, Any]) -> None:
        self.default_embedding = default_embedding


class CallableReranker(Reranker):
    """A Python function ``(query, documents) -> order`` as a re-ranker; the order must be a
    permutation of the candidates' indices (a prefix of it is not enough)."""

    NAME = "CallableReranker"

    def __init__(self, function: RerankFunction, top_k: int) -> None:
        super().__init__()
        self.function, self.top_k = function, top_k

    def rerank(self, question: str, hits: Sequence[Hit]) -> Outcome:
        order = self.function(question, [hit.chunk.text for hit in hits])
        try:
            indices = [int(index) for index in order]
        except (TypeError, ValueError):
            raise ValueError(f"the reranker must return indices, got {order!r}") from None
        if sorted(indices) != list(range(len(hits))):
            raise ValueError(f"the reranker must return a permutation of 0..{len(hits) - 1}, got {indices}")
        return Outcome([hits[index] for index in indices[: self.top_k]], {"reranker": "python callable"})


def _strategy_config(config_or_preset: str | Path | dict[str, Any]) -> dict[str, Any]:
    """A strategy reference from a preset name, a JSON file, a pipeline document, a strategy or
    a retriever reference (wrapped in NaiveRAG)."""
    if isinstance(config_or_preset, (str, Path)) and Path(config_or_preset).suffix == ".json":
        config_or_preset = json.loads(Path(config_or_preset).read_text(encoding="utf-8"))
    if isinstance(config_or_preset, str):
        presets = {preset.name: preset for preset in PRESETS}
        if config_or_preset not in presets:
            raise ValueError(f"unknown preset {config_or_preset!r}; presets: {', '.join(presets)}")
        return {"component": "NaiveRAG", "params": {"retriever": presets[config_or_preset].config()}}
    if not isinstance(config_or_preset, dict):
        raise ValueError("config_or_preset must be a preset name, a JSON file, or a configuration dict")
    if "strategy" in config_or_preset and "component" not in config_or_preset:
        config_or_preset = config_or_preset["strategy"]
    component = load_components().get(config_or_preset.get("component", ""))
    if component.KIND == "retriever":
        return {"component": "NaiveRAG", "params": {"retriever": config_or_preset}}
    return config_or_preset


def _files(data_source: str | Path | Sequence[str | Path]) -> list[Path]:
    if isinstance(data_source, (str, Path)):
        root = Path(data_source)
        if root.is_dir():
            return sorted(path for path in root.rglob("*") if path.is_file() and not path.name.startswith("."))
        return [root]
    return [Path(item) for item in data_source]


class RAG:
    """A pipeline over files, without a server.

    Parameters
    ----------
    config_or_preset : str, Path or dict
        A preset name (``"hybrid"``, ``"keyword"``, ``"agentic"``…), a pipeline JSON file, a
        pipeline document, a strategy reference, or a retriever reference (run by NaiveRAG).
    chunker, embedding_model : dict, optional
        How the files are cut and, for dense retrievers without their own model, embedded.
    """

    def __init__(
        self,
        config_or_preset: str | Path | dict[str, Any] = "hybrid",
        *,
        chunker: dict[str, Any] | None = None,
        embedding_model: dict[str, Any] | None = None,
    ) -> None:
        self.config = _strategy_config(config_or_preset)
        self.chunker_config = chunker or DEFAULT_CHUNKER
        self.embedding_config = embedding_model or DEFAULT_EMBEDDING
        self.docs: list[dict[str, Any]] = []
        self.state: dict[str, Any] = {}
        self.skipped: list[tuple[str, str]] = []
        self._corpus_key: tuple | None = None
        self._corpus: tuple[dict[int, dict[int, Chunk]], dict[int, SourceDocument]] | None = None

    def _load(self, data_source: str | Path | Sequence[str | Path]):
        files = _files(data_source)
        key = tuple((str(path), path.stat().st_mtime_ns) for path in files if path.exists())
        if key == self._corpus_key and self._corpus is not None:
            return self._corpus
        chunker = build(self.chunker_config, kind="chunker", registry=load_components())
        chunks: dict[int, dict[int, Chunk]] = {}
        documents: dict[int, SourceDocument] = {}
        self.skipped = []
        next_id = 1
        for document_id, path in enumerate(files, start=1):
            try:
                parsed = parse_document(path.read_bytes(), path.name)
            except (DocumentError, OSError) as exc:
                self.skipped.append((str(path), str(exc)))
                continue
            documents[document_id] = SourceDocument(document_id, path.name, parsed.mime)
            chunks[document_id] = {}
            for draft in chunker.split(parsed.sections):
                chunks[document_id][draft.position] = Chunk(next_id, document_id, draft.position, draft.text,
                                                            draft.metadata)
                next_id += 1
        if not chunks:
            reasons = "; ".join(f"{name}: {reason}" for name, reason in self.skipped) or "no files"
            raise ValueError(f"no usable document in {data_source!r} ({reasons})")
        self._corpus_key, self._corpus = key, (chunks, documents)
        return self._corpus

    def _reranker(self, reranker: Any, reranker_model: Any, rerank_top_k: int) -> Reranker | None:
        if not isinstance(rerank_top_k, int) or isinstance(rerank_top_k, bool) or rerank_top_k < 1:
            raise ValueError(f"rerank_top_k must be a positive integer, got {rerank_top_k!r}")
        if reranker is None:
            return None
        if callable(reranker):
            return CallableReranker(reranker, rerank_top_k)
        registry = load_components()
        if reranker == "llm":
            llm = reranker_model or self.config["params"].get("response_synthesizer", {}).get("params", {}).get(
                "llm", {"component": "LocalLLM", "params": {}})
            return registry.get("LLMReranker")(llm=llm, top_k=rerank_top_k)
        if reranker == "local":
            return registry.get("LLMReranker")(llm=reranker_model or {"component": "LocalLLM"},
                                               top_k=rerank_top_k)
        if isinstance(reranker, str) and reranker.startswith("local:") and len(reranker) > len("local:"):
            return registry.get("CrossEncoderReranker")(model_name=reranker.removeprefix("local:"),
                                                        top_k=rerank_top_k)
        raise ValueError(f"reranker must be None, 'llm', 'local', 'local:<model>' or a callable, got {reranker!r}")

    def strategy(self, data_source: str | Path | Sequence[str | Path], *, reranker: Any = None,
                 reranker_model: Any = None, rerank_top_k: int = 5) -> Strategy:
        """The built strategy over ``data_source`` (files parsed and chunked once, then cached)."""
        chosen = self._reranker(reranker, reranker_model, rerank_top_k)
        chunks, documents = self._load(data_source)
        infra = {"chunks": chunks, "documents": documents, "persistence": InMemoryStores(self.embedding_config)}
        strategy = build(self.config, kind="strategy", registry=load_components(), infra=infra)
        if chosen is not None:
            if "reranker" not in strategy.slots():
                raise ValueError(f"{strategy.NAME} has no re-ranking step")
            strategy.reranker = chosen
        return strategy

    def __call__(
        self,
        data_source: str | Path | Sequence[str | Path],
        question: str,
        *,
        reranker: Any = None,
        reranker_model: Any = None,
        rerank_top_k: int = 5,
        stream: bool = False,
        history: Sequence[dict[str, str]] = (),
    ) -> str | Iterator[str]:
        """The answer to ``question`` over ``data_source`` (or its text pieces with ``stream``)."""
        strategy = self.strategy(data_source, reranker=reranker, reranker_model=reranker_model,
                                 rerank_top_k=rerank_top_k)
        if stream:
            return self._stream(strategy, question, history)
        try:
            self.state = strategy.run(question, history=history)
        except StrategyError as exc:
            self.state = exc.state
            if isinstance(exc.__cause__, ValueError):
                raise exc.__cause__ from None  # the caller's mistake (e.g. its reranker), not a failure
            raise
        self.docs = self.state["chunks_sent"]
        return self.state["response"]

    def _stream(self, strategy: Strategy, question: str, history: Sequence[dict[str, str]]) -> Iterator[str]:
        for event in strategy.stream(question, history=history):
            if event["type"] == "generation.delta":
                yield event["text"]
            elif event["type"] in ("answer.completed", "run.failed"):
                self.state = event["state"]
                self.docs = self.state.get("chunks_sent", [])
                if event["type"] == "run.failed":
                    raise StrategyError(event["error"], event["state"])
