"""``MapReduceRAG``: expand the question, retrieve for every variant, fuse, answer."""

from __future__ import annotations

from typing import Any, Literal

from rag.core import ComponentRef, component_param, ml, param, ref, register
from rag.llms import LLM
from rag.retrievers import BaseRetriever

from .base import RunContext, Strategy, positional_params, set_chunks
from .params import AnsweringParams
from .slots import QueryTransformer, Reranker
from .steps import FuseFunction, fuse_step, rerank_step, retrieve_each, transform_step
from .synthesizer import ResponseSynthesizer


@register
class MapReduceRAG(Strategy["MapReduceRAG.Params"]):
    """Map: the transformer turns the question into variants, each retrieved on its own.
    Reduce: the rankings are fused and the best ``top_k`` answer the question.

    Parameters
    ----------
    transformer, retriever, response_synthesizer
        The query transformer, the retriever and the response synthesizer (components or
        references), also accepted by position in this order.
    fuse_fn : str or Callable[[list[list[Chunk]]], list[Chunk]], default "rrf"
        ``"rrf"`` (reciprocal rank fusion), or a Python callable that receives the variants'
        result lists as chunks (best first) and returns the fused chunks, best first: chunks the
        retrievals found, each at most once, or the run fails with a ``ValueError``. A strategy
        with a callable exists only in Python: it cannot be saved as JSON.
    top_k : int, default 5
        How many fused chunks reach the answer.
    """

    ICON = "git-fork"
    DISPLAY_NAME = ml("Map-reduce RAG", "RAG map-reduce", "Map-Reduce RAG")
    SHORT_NAME = ml("Map-reduce", "Map-reduce", "Map-Reduce")
    DESCRIPTION = ml(
        "Rewrites the question several ways, retrieves for each and fuses the results: better recall "
        "for vague or multi-part questions.",
        "Reescribe la pregunta de varias formas, recupera para cada una y fusiona los resultados: más "
        "cobertura para preguntas vagas o compuestas.",
        "將問題改寫成多種說法，分別檢索後融合結果：對模糊或多面向的問題有更好的召回率。",
    )
    REPRESENTATION = ml(
        "Map-reduce · {transformer.component} · {fuse_fn} · top {top_k}",
        "Map-reduce · {transformer.component} · {fuse_fn} · {top_k} mejores",
        "Map-Reduce · {transformer.component} · {fuse_fn} · 前 {top_k} 名",
    )

    # Built from the slots of ``Params``.
    retriever: BaseRetriever
    response_synthesizer: ResponseSynthesizer
    followup_llm: LLM
    reranker: Reranker | None
    transformer: QueryTransformer

    class Params(AnsweringParams):
        transformer: ComponentRef = component_param(
            "query_transformer", default=ref("MultiQueryTransformer"),
            title=ml("Query variants", "Variantes de la consulta", "查詢變體"),
            description=ml("Turns the question into the queries retrieved.",
                           "Convierte la pregunta en las consultas que se recuperan.",
                           "將問題轉換為要檢索的查詢。"),
        )
        fuse_fn: Literal["rrf"] = param(
            "rrf",
            title=ml("Fusion", "Fusión", "融合方式"),
            labels={"rrf": ml("RRF", "RRF", "RRF")},
            description=ml("Reciprocal rank fusion of the variants' rankings.",
                           "Fusión por rango recíproco de las clasificaciones de cada variante.",
                           "以倒數排名融合各變體的排序。"),
        )
        rrf_k: int = param(
            60, ge=1, le=10_000,
            title=ml("RRF k", "k de RRF", "RRF k"),
            description=ml("60 is the standard value.", "60 es el valor estándar.", "標準值為 60。"),
        )
        top_k: int = param(
            5, ge=1, le=1000,
            title=ml("Chunks answered from", "Fragmentos para responder", "用於回答的區塊數"),
            description=ml("How many fused chunks reach the answer.",
                           "Cuántos fragmentos fusionados llegan a la respuesta.",
                           "有多少融合後的區塊用於回答。"),
        )

    POSITIONAL = ("transformer", "retriever", "response_synthesizer", "fuse_fn", "top_k")

    def __init__(self, *args: Any, **params: Any) -> None:
        params = positional_params(type(self), args, params)
        fuse_fn = params.pop("fuse_fn", "rrf")
        self._fuse: FuseFunction | None = None if isinstance(fuse_fn, str) else fuse_fn
        if self._fuse is not None and not callable(self._fuse):
            raise ValueError("fuse_fn must be 'rrf' or a callable taking the variants' chunk lists")
        super().__init__(fuse_fn="rrf" if self._fuse is not None else fuse_fn, **params)

    def to_config(self) -> dict[str, Any]:
        if self._fuse is not None:
            raise ValueError("a MapReduceRAG with a Python fuse_fn cannot be saved as JSON")
        return super().to_config()

    def set_trace_params(self, raw_params: Any) -> None:
        super().set_trace_params(raw_params)
        if self._fuse is not None:
            self.trace_params["fuse_fn"] = getattr(self._fuse, "__name__", "custom")

    def _execute(self, run: RunContext) -> None:
        queries = transform_step(run, self.transformer)
        rankings = retrieve_each(self, run, self.retriever, queries)
        top_k = run.state["top_k"] or self.params.top_k
        hits = fuse_step(run, rankings, fuse=self._fuse, rrf_k=self.params.rrf_k, top_k=top_k)
        set_chunks(run, "chunks", hits)
        if self.reranker is not None:
            hits = rerank_step(run, self.reranker, hits)
        self.generate_step(run, self.response_synthesizer, hits, passages=top_k)
