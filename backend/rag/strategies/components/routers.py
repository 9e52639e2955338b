"""Routers: an LLM picks the route, or the question goes where its nearest example points."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field, ValidationInfo, field_validator

from rag.core import ComponentRef, component_param, ml, param, ref, register
from rag.core import Params as BaseParams
from rag.embeddings import (
    AllMiniLML6V2OnnxEmbedding,  # noqa: F401  (registers the default embedding_model)
    EmbeddingModel,
)
from rag.llms import (
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm)
)

from ..slots import RouteDecision, Router
from .similarity import cosine_similarities

ROUTER_PROMPT = (
    "You route a user's question to the one route best suited to answer it. Choose exactly one of the "
    "routes listed and give a short reason."
)

RouteName = Annotated[str, Field(min_length=1, max_length=100)]

_DEFAULT_ROUTE_TITLE = ml("Default route", "Ruta por defecto", "預設路線")


def route_schema(routes: Sequence[str]) -> dict[str, Any]:
    """The arguments of the routing call: one of ``routes`` and a reason."""
    return {
        "type": "object",
        "properties": {"route": {"type": "string", "enum": list(routes)}, "reason": {"type": "string"}},
        "required": ["route", "reason"],
        "additionalProperties": False,
    }


def _among_branches(route: str, routes: Sequence[str], default_route: str, reason: str,
                    details: dict[str, Any]) -> RouteDecision:
    """``route`` when the strategy has such a branch, else the default route with the reason why."""
    if route in routes:
        return RouteDecision(route, reason, details)
    details["fallback"] = f"{route!r} is not a branch of this strategy; taking the default route"
    return RouteDecision(default_route, reason, details)


@register
class LLMRouter(Router["LLMRouter.Params"]):
    """An LLM chooses one of ``valid_routes`` for the question, with a reason.

    One function call answers ``{"route": ..., "reason": ...}``, the route restricted to
    ``valid_routes`` by the schema; an unusable answer is asked again with its problems, up to
    ``function_call_max_trials`` attempts, after which ``default_route`` is taken and the details
    say why. A route that is not among the strategy's branches also falls to ``default_route``.
    """

    ICON = "signpost"
    DISPLAY_NAME = ml("LLM router", "Enrutador con LLM", "LLM 路由器")
    SHORT_NAME = ml("LLM router", "Enrutador LLM", "LLM 路由器")
    DESCRIPTION = ml(
        "An LLM reads the question and chooses which branch of the strategy answers it.",
        "Un LLM lee la pregunta y elige qué rama de la estrategia la responde.",
        "由 LLM 閱讀問題，選擇由策略的哪個分支回答。",
    )
    REPRESENTATION = ml(
        "LLM router · {llm.component} · {valid_routes}",
        "Enrutador LLM · {llm.component} · {valid_routes}",
        "LLM 路由 · {llm.component} · {valid_routes}",
    )
    EXAMPLE_PARAMS = {"valid_routes": ["documents", "chitchat"], "default_route": "documents"}

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(BaseParams):
        llm: ComponentRef = component_param(
            "llm", default=ref("LocalLLM"),
            title=ml("Language model", "Modelo de lenguaje", "語言模型"),
            description=ml("The model that chooses the route.", "El modelo que elige la ruta.", "負責選擇路線的模型。"),
        )
        valid_routes: list[RouteName] = param(
            min_length=1, max_length=50,
            title=ml("Routes", "Rutas", "路線"),
            description=ml(
                "The routes the model may choose from, each named like a branch of the strategy.",
                "Las rutas entre las que puede elegir el modelo, cada una con el nombre de una rama de la estrategia.",
                "模型可選擇的路線，名稱須與策略的分支相同。",
            ),
        )
        default_route: RouteName = param(
            title=_DEFAULT_ROUTE_TITLE,
            description=ml(
                "Taken when the model gives no usable answer; must be one of the routes.",
                "Se toma cuando el modelo no da una respuesta utilizable; debe ser una de las rutas.",
                "模型未給出可用答案時採用；必須是其中一條路線。",
            ),
        )
        function_call_max_trials: int = param(
            3, ge=1, le=10,
            title=ml("Attempts", "Intentos", "嘗試次數"),
            description=ml(
                "How many times to ask again when the answer is malformed or names an unknown route.",
                "Cuántas veces preguntar de nuevo si la respuesta está mal formada o nombra una ruta desconocida.",
                "當回答格式錯誤或指定了未知路線時，最多重新詢問幾次。",
            ),
        )
        descriptions: dict[RouteName, Annotated[str, Field(max_length=1000)]] = param(
            default_factory=dict,
            title=ml("Route descriptions", "Descripciones de las rutas", "路線說明"),
            description=ml(
                "What each route is for, shown to the model (route name → description); optional.",
                "Para qué sirve cada ruta, tal como se le muestra al modelo (nombre de ruta → descripción); opcional.",
                "每條路線的用途，會提供給模型參考（路線名稱 → 說明）；選填。",
            ),
        )

        @field_validator("valid_routes")
        @classmethod
        def _unique(cls, routes: list[str]) -> list[str]:
            repeated = sorted({route for route in routes if routes.count(route) > 1})
            if repeated:
                raise ValueError(f"routes must be unique; {', '.join(repeated)} appear(s) more than once")
            return routes

        # Field validators (not a model validator) so the error sits on the field that is wrong;
        # they see the fields declared before them in ``info.data``.
        @field_validator("default_route")
        @classmethod
        def _default_is_a_route(cls, route: str, info: ValidationInfo) -> str:
            routes = info.data.get("valid_routes")
            if routes is not None and route not in routes:
                raise ValueError(f"{route!r} is not one of the routes ({', '.join(routes)})")
            return route

        @field_validator("descriptions")
        @classmethod
        def _described_routes_exist(cls, descriptions: dict[str, str], info: ValidationInfo) -> dict[str, str]:
            routes = info.data.get("valid_routes")
            unknown = sorted(set(descriptions) - set(routes)) if routes is not None else []
            if unknown:
                raise ValueError(f"describes routes that are not in valid_routes: {', '.join(unknown)}")
            return descriptions

    def messages(self, question: str) -> list[dict[str, str]]:
        """The conversation asking for a route."""
        lines = [
            f"- {route}: {self.params.descriptions[route]}" if self.params.descriptions.get(route) else f"- {route}"
            for route in self.params.valid_routes
        ]
        return [
            {"role": "system", "content": ROUTER_PROMPT},
            {"role": "user", "content": (
                "Routes:\n" + "\n".join(lines) + f"\n\nQuestion: {question}\n\n"
                "Return {\"route\": <one of the routes>, \"reason\": \"...\"}."
            )},
        ]

    def route(self, question: str, routes: Sequence[str]) -> RouteDecision:
        """The chosen route and the model's reason; ``details`` holds the attempts and, when the
        default route was taken instead, ``fallback`` saying why."""
        arguments, attempts = self.llm.call_function_with_retries(
            self.messages(question), route_schema(self.params.valid_routes),
            max_trials=self.params.function_call_max_trials, name="choose_route",
            description="the route that should answer the question",
        )
        details: dict[str, Any] = {"attempts": [attempt.to_dict() for attempt in attempts]}
        default = self.params.default_route
        if arguments is None:
            problems = "; ".join(attempts[-1].problems) if attempts else "no attempt was made"
            reason = f"the LLM gave no usable route after {len(attempts)} attempt(s) ({problems})"
            details["fallback"] = f"{reason}; taking the default route"
            return RouteDecision(default, reason, details)
        details["chosen"] = arguments["route"]
        return _among_branches(arguments["route"], routes, default, arguments["reason"].strip(), details)


@register
class EmbeddingSimilarityRouter(Router["EmbeddingSimilarityRouter.Params"]):
    """Routes a question to the route of its most similar example question.

    Each route's score is the best cosine similarity between the question and one of its
    examples (embedded once, as queries). The best route is taken when its score reaches
    ``threshold``, otherwise ``default_route``; a route that is not among the strategy's
    branches also falls to ``default_route``. The details give every route's score.
    """

    ICON = "route"
    DISPLAY_NAME = ml("Example-based router", "Enrutador por ejemplos", "範例式路由器")
    SHORT_NAME = ml("Examples", "Ejemplos", "範例")
    DESCRIPTION = ml(
        "Sends the question to the branch whose example questions it resembles most, by embedding "
        "similarity. Fast, no LLM needed.",
        "Envía la pregunta a la rama cuyas preguntas de ejemplo más se le parecen, por similitud de "
        "embeddings. Rápido y sin LLM.",
        "依嵌入相似度，將問題送往範例問題與之最相似的分支。速度快，不需要 LLM。",
    )
    REPRESENTATION = ml(
        "Examples · {embedding_model.component} · ≥ {threshold}",
        "Ejemplos · {embedding_model.component} · ≥ {threshold}",
        "範例 · {embedding_model.component} · ≥ {threshold}",
    )
    EXAMPLE_PARAMS = {
        "examples": {"documents": ["What does the contract say about termination?"],
                     "chitchat": ["Hello, how are you?"]},
        "default_route": "documents",
    }

    # Built from the slots of ``Params``.
    embedding_model: EmbeddingModel

    class Params(BaseParams):
        embedding_model: ComponentRef = component_param(
            "embedding", default=ref("AllMiniLML6V2OnnxEmbedding"),
            title=ml("Embedding model", "Modelo de embeddings", "嵌入模型"),
            description=ml(
                "The model that embeds the question and the examples.",
                "El modelo que vectoriza la pregunta y los ejemplos.",
                "將問題與範例轉為向量的模型。",
            ),
        )
        examples: dict[RouteName, Annotated[list[Annotated[str, Field(min_length=1, max_length=2000)]],
                                            Field(min_length=1, max_length=200)]] = param(
            min_length=1, max_length=50,
            title=ml("Example questions", "Preguntas de ejemplo", "範例問題"),
            description=ml(
                "For each route, at least one question that should go there (route name → questions).",
                "Para cada ruta, al menos una pregunta que debería ir allí (nombre de ruta → preguntas).",
                "每條路線至少提供一個應送往該路線的問題（路線名稱 → 問題）。",
            ),
        )
        threshold: float = param(
            0.5, ge=-1.0, le=1.0,
            title=ml("Minimum similarity", "Similitud mínima", "最低相似度"),
            description=ml(
                "Below this cosine similarity to every example, the question takes the default route.",
                "Por debajo de esta similitud coseno con todos los ejemplos, la pregunta toma la ruta por defecto.",
                "若問題與所有範例的餘弦相似度都低於此值，則採用預設路線。",
            ),
        )
        default_route: RouteName = param(
            title=_DEFAULT_ROUTE_TITLE,
            description=ml(
                "Taken when no example is similar enough; must be one of the routes of the examples.",
                "Se toma cuando ningún ejemplo es lo bastante similar; debe ser una de las rutas de los ejemplos.",
                "沒有足夠相似的範例時採用；必須是範例中的其中一條路線。",
            ),
        )

        @field_validator("default_route")
        @classmethod
        def _default_is_a_route(cls, route: str, info: ValidationInfo) -> str:
            examples = info.data.get("examples")
            if examples is not None and route not in examples:
                raise ValueError(f"{route!r} is not one of the routes of the examples ({', '.join(examples)})")
            return route

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._example_vectors: dict[str, Any] | None = None

    def init_model(self) -> None:
        self._vectors()

    def _vectors(self) -> dict[str, Any]:
        if self._example_vectors is None:
            import numpy as np

            self._example_vectors = {
                route: np.stack([self.embedding_model.embed_query(example) for example in examples])
                for route, examples in self.params.examples.items()
            }
        return self._example_vectors

    def route(self, question: str, routes: Sequence[str]) -> RouteDecision:
        """The route of the most similar example, or the default; ``details["scores"]`` maps every
        route to its best similarity."""
        query = self.embedding_model.embed_query(question)
        scores = {route: max(cosine_similarities(query, vectors)) for route, vectors in self._vectors().items()}
        best = max(scores, key=lambda route: scores[route])
        threshold = self.params.threshold
        details: dict[str, Any] = {"scores": scores, "threshold": threshold, "best": best}
        if scores[best] < threshold:
            reason = f"no example is similar enough (best: {best} at {scores[best]:.3f} < {threshold:g})"
            return RouteDecision(self.params.default_route, reason, details)
        reason = f"most similar to an example of {best} ({scores[best]:.3f})"
        return _among_branches(best, routes, self.params.default_route, reason, details)
