"""Parameters every LLM component shares."""

from rag.core import Params, ml, param


class LLMParams(Params):
    temperature: float = param(
        0.0, ge=0.0, le=2.0,
        title=ml("Temperature", "Temperatura", "溫度"),
        description=ml(
            "0 answers the same way every time; higher values vary the wording.",
            "Con 0 responde siempre igual; valores más altos varían la redacción.",
            "0 表示每次回答都相同；數值越高措辭越多變。",
        ),
    )
    max_tokens: int = param(
        1024, ge=1, le=32768,
        title=ml("Maximum answer length (tokens)", "Longitud máxima de respuesta (tokens)", "回答長度上限（token）"),
        description=ml(
            "The model stops after this many tokens.",
            "El modelo se detiene tras esta cantidad de tokens.",
            "模型產生此數量的 token 後即停止。",
        ),
    )
