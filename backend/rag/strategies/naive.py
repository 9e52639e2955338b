"""``NaiveRAG``: [query expansion] → retrieve → [relevance filter] → [re-rank] → generate."""

from __future__ import annotations

from typing import Any

from rag.core import ComponentRef, ConfigObject, component_param, ml, param, register
from rag.llms import LLM
from rag.retrievers import BaseRetriever, Hit

from .base import RunContext, Strategy, set_chunks
from .params import AnsweringParams
from .slots import QueryTransformer, RelevanceFilter, Reranker
from .steps import expand_and_retrieve, filter_step, rerank_step
from .synthesizer import ResponseSynthesizer


@register
class NaiveRAG(Strategy["NaiveRAG.Params"]):
    """Retrieve once (or once per expanded query, fused by RRF), optionally filter and re-rank,
    then answer: ``[query_expansion?] → retrieve → [relevance_filter?] → [reranker?] → generate``.

    ``NaiveRAG(retriever, response_synthesizer)`` takes those two by position too.

    Attributes
    ----------
    query_expansion : QueryTransformer or None
        Optional query expansion: the question becomes several queries, each retrieved, fused by
        RRF. Configured as the ``query_transformer`` parameter (the same component).
    relevance_filter : RelevanceFilter or None
        Optional filter of the retrieved chunks.
    reranker : Reranker or None
        Optional re-ranker, applied before the answer is written.
    """

    POSITIONAL = ("retriever", "response_synthesizer")
    ICON = "workflow"
    DISPLAY_NAME = ml("Naive RAG", "RAG simple", "基本 RAG")
    DESCRIPTION = ml(
        "Retrieve, optionally filter and re-rank, then answer: the straightforward pipeline.",
        "Recupera, opcionalmente filtra y reordena, y luego responde: el pipeline directo.",
        "檢索，選擇性地篩選與重新排序，然後回答：最直接的流程。",
    )
    REPRESENTATION = ml(
        "Naive RAG · {retriever.component} → {response_synthesizer.llm.component}",
        "RAG simple · {retriever.component} → {response_synthesizer.llm.component}",
        "基本 RAG · {retriever.component} → {response_synthesizer.llm.component}",
    )

    # Built from the slots of ``Params``.
    retriever: BaseRetriever
    response_synthesizer: ResponseSynthesizer
    followup_llm: LLM
    reranker: Reranker | None
    query_transformer: QueryTransformer | None
    relevance_filter: RelevanceFilter | None

    class Params(AnsweringParams):
        query_transformer: ComponentRef | None = component_param(
            "query_transformer", optional=True,
            title=ml("Query expansion", "Expansión de la consulta", "查詢擴展"),
            description=ml(
                "Optional: rewrites the question into several queries, retrieved one by one and fused.",
                "Opcional: reescribe la pregunta en varias consultas, recuperadas por separado y fusionadas.",
                "選用：將問題改寫為多個查詢，分別檢索後融合。",
            ),
        )
        relevance_filter: ComponentRef | None = component_param(
            "relevance_filter", optional=True,
            title=ml("Relevance filter", "Filtro de relevancia", "相關性篩選"),
            description=ml("Optional: drops chunks that do not help answer.",
                           "Opcional: descarta los fragmentos que no ayudan a responder.",
                           "選用：捨棄對回答沒有幫助的區塊。"),
        )
        top_k: int | None = param(
            None, ge=1, le=1000,
            title=ml("Chunks retrieved", "Fragmentos recuperados", "檢索區塊數"),
            description=ml("Overrides the retriever's own top_k; empty keeps it.",
                           "Reemplaza el top_k del recuperador; vacío lo mantiene.",
                           "覆寫檢索器自身的 top_k；留空則沿用。"),
        )

    @property
    def query_expansion(self) -> QueryTransformer | None:
        """The optional query expansion step (the ``query_transformer`` parameter)."""
        return self.query_transformer

    @query_expansion.setter
    def query_expansion(self, component: ConfigObject | None) -> None:
        if component is not None and not isinstance(component, QueryTransformer):
            raise ValueError(f"query_expansion takes a query transformer, not {_kind(component)}")
        self.query_transformer = component

    def _execute(self, run: RunContext) -> None:
        if run.state["top_k"] is None:
            run.state["top_k"] = self.params.top_k
        hits: list[Hit] = expand_and_retrieve(self, run, self.retriever, self.query_transformer)
        set_chunks(run, "chunks", hits)
        if self.relevance_filter is not None:
            hits = filter_step(run, self.relevance_filter, hits)
            set_chunks(run, "filtered_chunks", hits)
        passages = None
        if self.reranker is not None:
            hits = rerank_step(run, self.reranker, hits)
            passages = len(hits)  # what the re-ranker kept (its top_k) is what the model reads
        self.generate_step(run, self.response_synthesizer, hits, passages=passages)


def _kind(value: Any) -> str:
    kind = getattr(value, "KIND", None)
    return f"{value.NAME} (a {kind})" if kind else type(value).__name__
