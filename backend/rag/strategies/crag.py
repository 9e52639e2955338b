"""``CRAG``: retrieve, judge the chunks, and answer from what the judgement allows."""

from __future__ import annotations

from rag.core import ComponentRef, component_param, ml, register
from rag.llms import LLM
from rag.retrievers import BaseRetriever, Hit

from .base import RunContext, Strategy, set_chunks
from .params import AnsweringParams
from .slots import RelevanceEvaluator, Reranker, WebRetriever
from .steps import rerank_step, web_step
from .synthesizer import ResponseSynthesizer

RELEVANT, IRRELEVANT, AMBIGUOUS = "relevant", "irrelevant", "ambiguous"


@register
class CRAG(Strategy["CRAG.Params"]):
    """Corrective RAG (DESIGN §6): the evaluator's per-chunk verdicts decide the branch.

    All relevant → ``relevant``: answer from the chunks. None → ``irrelevant``: search the web
    when a web retriever is configured, else answer from the original chunks. Some →
    ``ambiguous``: answer from the relevant ones. No evaluator → ``relevant``. Each branch may
    re-rank first. The decision and its reasons are in the trace. ``CRAG(retriever,
    response_synthesizer)`` takes those two by position too.
    """

    POSITIONAL = ("retriever", "response_synthesizer")
    ICON = "shield-check"
    DISPLAY_NAME = ml("Corrective RAG (CRAG)", "RAG correctivo (CRAG)", "修正式 RAG（CRAG）")
    SHORT_NAME = ml("CRAG", "CRAG", "CRAG")
    DESCRIPTION = ml(
        "Judges whether the retrieved chunks are relevant and corrects course: keeps the good ones, "
        "or searches the web when none helps.",
        "Evalúa si los fragmentos recuperados son relevantes y corrige el rumbo: conserva los buenos "
        "o busca en la web cuando ninguno sirve.",
        "判斷檢索到的區塊是否相關並修正方向：保留有用的區塊，或在全都無用時改為搜尋網路。",
    )
    REPRESENTATION = ml(
        "CRAG · {retriever.component} · judge {relevance_evaluator.component|none} · web {web_retriever.component|none}",
        "CRAG · {retriever.component} · juez {relevance_evaluator.component|ninguno} · web {web_retriever.component|ninguna}",
        "CRAG · {retriever.component} · 評估 {relevance_evaluator.component|無} · 網路 {web_retriever.component|無}",
    )

    # Built from the slots of ``Params``.
    retriever: BaseRetriever
    response_synthesizer: ResponseSynthesizer
    followup_llm: LLM
    reranker: Reranker | None
    relevance_evaluator: RelevanceEvaluator | None
    web_retriever: WebRetriever | None

    class Params(AnsweringParams):
        relevance_evaluator: ComponentRef | None = component_param(
            "relevance_evaluator", optional=True,
            title=ml("Relevance evaluator", "Evaluador de relevancia", "相關性評估器"),
            description=ml(
                "Judges each chunk; without one every chunk counts as relevant.",
                "Evalúa cada fragmento; sin él todos cuentan como relevantes.",
                "評估每個區塊；未設定時所有區塊都視為相關。",
            ),
        )
        web_retriever: ComponentRef | None = component_param(
            "web_retriever", optional=True,
            title=ml("Web search", "Búsqueda web", "網路搜尋"),
            description=ml(
                "Used when no chunk is relevant; without one the original chunks are used.",
                "Se usa cuando ningún fragmento es relevante; sin ella se usan los fragmentos originales.",
                "當沒有任何相關區塊時使用；未設定時改用原本的區塊。",
            ),
        )

    def _execute(self, run: RunContext) -> None:
        hits = self.retrieve_step(run, self.retriever, self.search_question(run))
        set_chunks(run, "chunks", hits)
        with run.step("decide") as entry:
            if self.relevance_evaluator is None:
                decision, relevant = RELEVANT, list(hits)
                entry["why"] = "no relevance evaluator: every chunk counts as relevant"
            else:
                judgements, details = self.relevance_evaluator.evaluate(self.search_question(run), hits)
                verdict = {judgement.chunk_id: judgement for judgement in judgements}
                relevant = [hit for hit in hits if verdict.get(hit.chunk.id) and verdict[hit.chunk.id].relevant]
                decision = RELEVANT if len(relevant) == len(hits) and hits else (
                    IRRELEVANT if not relevant else AMBIGUOUS)
                entry["verdicts"] = [{"chunk_id": j.chunk_id, "relevant": j.relevant, "reason": j.reason}
                                     for j in judgements]
                entry["details"] = details
                entry["why"] = f"{len(relevant)} of {len(hits)} chunks judged relevant"
            entry["decision"] = decision
        run.state["retrieval_decision"] = decision
        answer_from: list[Hit]
        if decision == AMBIGUOUS:
            answer_from = relevant
            set_chunks(run, "filtered_chunks", relevant)
        elif decision == IRRELEVANT and self.web_retriever is not None:
            answer_from = web_step(run, self.web_retriever)
            set_chunks(run, "filtered_chunks", answer_from)
        else:
            answer_from = list(hits)
        passages = None
        if self.reranker is not None:
            answer_from = rerank_step(run, self.reranker, answer_from)
            passages = len(answer_from)  # what the re-ranker kept (its top_k) is what the model reads
        self.generate_step(run, self.response_synthesizer, answer_from, passages=passages)
