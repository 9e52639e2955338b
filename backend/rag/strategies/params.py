"""Parameters every answering strategy shares: its retriever, its synthesizer, a re-ranker."""

from rag.core import ComponentRef, Params, component_param, ml, ref
from rag.llms import ANSWER_MODEL
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


FOLLOWUP_TITLE = ml("Follow-up model", "Modelo de seguimiento", "追問改寫模型")
FOLLOWUP_DESCRIPTION = ml(
    "Rewrites a question that refers to earlier turns (\"When did it open?\") into one that stands alone, "
    "which is then searched and answered; a question that already stands alone is searched as asked, with no "
    "call. By default the packaged local 1.5B model, which also writes the answers.",
    "Reescribe una pregunta que remite a turnos anteriores (\"¿Cuándo se inauguró?\") en una que se entiende "
    "sola, que es la que se busca y se responde; una pregunta que ya se entiende sola se busca tal cual, sin "
    "llamada. Por defecto, el modelo local 1.5B incluido, que también redacta las respuestas.",
    "將指涉先前對話的問題（「它何時開放？」）改寫為可獨立理解的問題，再據以檢索與回答；本身已可獨立理解的問題"
    "則照原樣檢索，不呼叫模型。預設為內建的本機 1.5B 模型，它也負責撰寫回答。",
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
    followup_llm: ComponentRef = component_param("llm", default=ref("LocalLLM", model=ANSWER_MODEL), title=FOLLOWUP_TITLE,
                                                 description=FOLLOWUP_DESCRIPTION)
