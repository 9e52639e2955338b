"""Embeddings from any server speaking the OpenAI embeddings API."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from rag.clients.openai_api import NO_KEY, make_client, readable_errors, resolve_api_key
from rag.clients.outbound import OutboundPolicy
from rag.core import ml, param, register

from .base import EmbeddingError, EmbeddingModel, EmbeddingParams, EmbeddingProgress, normalise, slug

if TYPE_CHECKING:
    import numpy as np

# Sizes OpenAI documents for its models, so that `dimension` needs no request for them.
KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
KNOWN_MAX_TOKENS = {"text-embedding-3-small": 8191, "text-embedding-3-large": 8191, "text-embedding-ada-002": 8191}


@register
class OpenAICompatibleEmbedding(EmbeddingModel["OpenAICompatibleEmbedding.Params"]):
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint through the official
    ``openai`` client: OpenAI, Azure-style gateways, Ollama, vLLM, LM Studio, llama.cpp.

    Texts are sent in batches of ``batch_size``; the answer's ``index`` restores input order.
    An HTTP failure becomes an ``EmbeddingError`` naming the server, the status and the
    server's message, with the API key removed.

    Parameters
    ----------
    base_url : str
        API root, e.g. ``https://api.openai.com/v1`` or ``http://localhost:11434/v1``.
    model : str
        Model name on that server.
    dimensions : int or None
        Requested vector size (text-embedding-3-*); None keeps the model's own.
    credential : str or None
        Name of the stored credential whose ``api_key`` is sent as the bearer token; None for
        local servers that need no key.
    timeout : float
        Seconds to wait for each request.
    batch_size, normalize
        See ``EmbeddingParams``. ``device`` and ``overflow_strategy`` are fixed: the server
        chooses its hardware and applies its own length limit.
    """

    ICON = "cloud"
    DISPLAY_NAME = ml("OpenAI-compatible embeddings", "Vectores compatibles con OpenAI", "OpenAI 相容嵌入")
    SHORT_NAME = ml("OpenAI-compatible", "Compatible con OpenAI", "OpenAI 相容")
    DESCRIPTION = ml(
        "Embeddings from an OpenAI-compatible API: OpenAI, Azure-style gateways, Ollama, vLLM, LM Studio or a "
        "llama.cpp server.",
        "Vectores de una API compatible con OpenAI: OpenAI, pasarelas tipo Azure, Ollama, vLLM, LM Studio o "
        "un servidor llama.cpp.",
        "來自 OpenAI 相容 API 的嵌入：OpenAI、Azure 類閘道、Ollama、vLLM、LM Studio 或 llama.cpp 伺服器。",
    )
    REPRESENTATION = ml("{model} · {base_url}", "{model} · {base_url}", "{model} · {base_url}")

    class Params(EmbeddingParams):
        device: Literal["CPU"] = param(
            "CPU",
            title=ml("Device", "Dispositivo", "運算裝置"),
            description=ml(
                "The server decides where the model runs; this setting does not apply.",
                "El servidor decide dónde se ejecuta el modelo; este ajuste no aplica.",
                "模型在何處執行由伺服器決定；此設定不適用。",
            ),
        )
        overflow_strategy: Literal["truncate"] = param(
            "truncate",
            title=ml("Long texts", "Textos largos", "過長文字"),
            description=ml(
                "Texts are sent whole and the server applies its own length limit; aggregating needs a "
                "local tokenizer, which a remote model lacks.",
                "Los textos se envían completos y el servidor aplica su propio límite de longitud; agregar "
                "requiere un tokenizador local, que un modelo remoto no tiene.",
                "文字會完整送出，由伺服器套用自身的長度限制；彙總需要本機分詞器，而遠端模型沒有。",
            ),
        )
        base_url: str = param(
            "https://api.openai.com/v1",
            json_schema_extra={"x-outbound": True},
            title=ml("Base URL", "URL base", "基礎網址"),
            description=ml(
                "The API root, ending in /v1 on most servers (Ollama: http://localhost:11434/v1).",
                "La raíz de la API; en la mayoría de los servidores termina en /v1 (Ollama: "
                "http://localhost:11434/v1).",
                "API 根網址，多數伺服器以 /v1 結尾（Ollama：http://localhost:11434/v1）。",
            ),
            pattern=r"^https?://[^\s/]+\S*$",
        )
        model: str = param(
            "text-embedding-3-small",
            title=ml("Model", "Modelo", "模型"),
            description=ml("The embedding model's name on that server.",
                           "El nombre del modelo de vectorización en ese servidor.",
                           "該伺服器上的嵌入模型名稱。"),
            min_length=1,
        )
        dimensions: int | None = param(
            None,
            title=ml("Dimensions", "Dimensiones", "維度"),
            description=ml(
                "Shorter vectors, for models that support it (text-embedding-3-*); empty keeps the model's size.",
                "Vectores más cortos, para los modelos que lo admiten (text-embedding-3-*); vacío conserva el "
                "tamaño del modelo.",
                "為支援的模型（text-embedding-3-*）輸出較短的向量；留空則保留模型原本的維度。",
            ),
            ge=1,
            le=65536,
        )
        credential: str | None = param(
            None,
            json_schema_extra={"x-credential": True},
            title=ml("Credential", "Credencial", "憑證"),
            description=ml(
                "Name of the stored credential holding the API key; leave empty for local servers that need none.",
                "Nombre de la credencial guardada que contiene la clave de API; déjalo vacío para servidores "
                "locales que no la necesitan.",
                "存放 API 金鑰的已儲存憑證名稱；不需要金鑰的本機伺服器請留空。",
            ),
            min_length=1,
        )
        timeout: float = param(
            30.0,
            title=ml("Timeout (seconds)", "Tiempo de espera (segundos)", "逾時（秒）"),
            description=ml("How long to wait for each request before giving up.",
                           "Cuánto esperar cada solicitud antes de desistir.",
                           "每個請求放棄前的等待時間。"),
            gt=0,
            le=600,
        )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._client: Any = None
        self._api_key = NO_KEY
        self._client_lock = threading.Lock()
        self._probed_dimension: int | None = None
        self._outbound: OutboundPolicy | None = None

    # -- metadata ---------------------------------------------------------------------------

    @property
    def dimension(self) -> int:
        known = self.params.dimensions or KNOWN_DIMENSIONS.get(self.params.model)
        if known is None:
            if self._probed_dimension is None:
                self._probed_dimension = int(self.embed_query("dimension probe").shape[0])
            known = self._probed_dimension
        return known

    @property
    def max_tokens(self) -> int | None:
        return KNOWN_MAX_TOKENS.get(self.params.model)

    @property
    def model_key(self) -> str:
        address = urlsplit(self.params.base_url)
        name = f"{address.netloc}{address.path.rstrip('/').removesuffix('/v1')}-{self.params.model}"
        dimensions = self.params.dimensions
        if dimensions is not None and dimensions != KNOWN_DIMENSIONS.get(self.params.model):
            return f"{slug(name, max_length=40)}-{dimensions}d"
        return slug(name)

    @classmethod
    def _availability_problem(cls, params: Any) -> str | None:
        # A network service can only be checked by calling it, which happens at run time.
        return None

    # -- life cycle -------------------------------------------------------------------------

    def inject_infra(self, *, outbound: OutboundPolicy | None = None, **infra: Any) -> None:
        """``outbound``: the policy every connection must meet (given for the components of a user
        who is not an administrator); None reaches any address."""
        self._outbound = outbound
        super().inject_infra(**infra)

    def init_model(self) -> None:
        """Resolve the credential and build the HTTP client (no request is made)."""
        with self._client_lock:
            if self._client is not None:
                return
            self._api_key = resolve_api_key(self, self.params.credential, url=self.params.base_url)
            self._client = make_client(base_url=self.params.base_url, api_key=self._api_key,
                                       timeout=self.params.timeout, outbound=self._outbound)

    def close(self) -> None:
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None
        super().close()

    # -- embedding --------------------------------------------------------------------------

    def _embed(self, texts: list[str], *, query: bool, progress: EmbeddingProgress | None = None) -> np.ndarray:
        import numpy as np

        self.init_model()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        size = self.params.batch_size
        parts = []
        for start in range(0, len(texts), size):
            parts.append(self._request(texts[start:start + size]))
            if progress is not None:
                progress(min(start + size, len(texts)), len(texts))
        vectors = np.concatenate(parts)
        if self.params.normalize:
            vectors = normalise(vectors)
        return vectors.astype(np.float32, copy=False)

    def _request(self, batch: list[str]) -> np.ndarray:
        import numpy as np

        options: dict[str, Any] = {}
        if self.params.dimensions is not None:
            options["dimensions"] = self.params.dimensions
        where = f"{self.params.base_url} (model {self.params.model})"
        with readable_errors(where, api_key=self._api_key, timeout=self.params.timeout, error=EmbeddingError):
            # Floats rather than the client's default base64: not every compatible server knows base64.
            response = self._client.embeddings.create(model=self.params.model, input=batch,
                                                      encoding_format="float", **options)
        items = sorted(response.data, key=lambda item: item.index)
        if [item.index for item in items] != list(range(len(batch))):
            raise EmbeddingError(f"{where} returned embeddings for indices {[item.index for item in items]} "
                                 f"to a request of {len(batch)} texts")
        vectors = np.asarray([item.embedding for item in items], dtype=np.float32)
        expected = self.params.dimensions
        if expected is not None and vectors.shape[1] != expected:
            raise EmbeddingError(f"{where} returned {vectors.shape[1]}-dimensional vectors, "
                                 f"but {expected} dimensions were asked for")
        return vectors
