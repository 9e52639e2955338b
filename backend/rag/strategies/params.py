"""Parameters every answering strategy shares: its retriever, its synthesizer, a re-ranker."""

from rag.core import ComponentRef, Params, component_param, ml, ref
from rag.presets import default_retriever

RETRIEVER_TITLE = ml("Retriever", "Recuperador", "檢索器")
RETRIEVER_DESCRIPTION = ml(
    "The retriever tree that finds the chunks.", "El árbol de recuperadores que encuentra los fragmentos.",
    "找出區塊的檢索器樹。",
)
SYNTHESIZER_TITLE = ml("Response synthesizer", "Sintetizador de respuestas", "回答合成器")
SYNTHESIZER_DESCRIPTION = ml("Writes the answer.", "Redacta la respuesta.", "撰寫回答。")
RERANKER_TITLE = ml("Re-ranker", "Reordenador", "重新排序器")
RERANKER_DESCRIPTION = ml(
    "Optional: re-orders the chunks before the answer is written.",
    "Opcional: reordena los fragmentos antes de redactar la respuesta.",
    "選用：在撰寫回答前重新排序區塊。",
)


class AnsweringParams(Params):
    retriever: ComponentRef = component_param("retriever", default=default_retriever(), title=RETRIEVER_TITLE,
                                              description=RETRIEVER_DESCRIPTION)
    response_synthesizer: ComponentRef = component_param(
        "synthesizer", default=ref("ResponseSynthesizer"), title=SYNTHESIZER_TITLE,
        description=SYNTHESIZER_DESCRIPTION,
    )
    reranker: ComponentRef | None = component_param("reranker", optional=True, title=RERANKER_TITLE,
                                                    description=RERANKER_DESCRIPTION)
