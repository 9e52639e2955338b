"""A private registry of small components for testing the core without the shipped ones."""

from typing import Literal

from pydantic import SecretStr, model_validator

from rag.core import (
    ComponentRef,
    ConfigObject,
    Params,
    Registry,
    children_param,
    component_param,
    ml,
    param,
    ref,
)

registry = Registry()
events: list[tuple[str, str]] = []


class Recording(ConfigObject):
    """Records the factory's calls so tests can check their order."""

    def set_trace_params(self, raw_params):
        super().set_trace_params(raw_params)
        events.append(("set_trace_params", self.NAME))

    def inject_infra(self, **infra):
        self.infra = infra
        events.append(("inject_infra", self.NAME))

    def init_model(self):
        events.append(("init_model", self.NAME))


@registry.register
class Encoder(Recording):
    KIND = "embedding"
    CATEGORY = "dense"
    ICON = "brain"
    DISPLAY_NAME = ml("Encoder", "Encoder (es)", "Encoder (zh)")
    DESCRIPTION = ml("A encoder for tests.", "Para pruebas.", "測試用。")

    class Params(Params):
        batch_size: int = param(32, title=ml("Batch size"), ge=1, le=4096)
        device: Literal["CPU", "CUDA"] = param("CPU", title=ml("Device"))

    @classmethod
    def availability_problem(cls, params):
        return "this machine has no CUDA device; choose CPU" if params["device"] == "CUDA" else None


@registry.register
class Keyword(Recording):
    KIND = "retriever"
    CATEGORY = "sparse"
    ICON = "text-search"
    REPRESENTATION = ml("Keyword · top {top_k} · k1={k1}", "Palabras · top {top_k}", "關鍵字 · 前 {top_k}")
    DISPLAY_NAME = ml("Keyword", "Keyword (es)", "Keyword (zh)")
    DESCRIPTION = ml("A keyword for tests.", "Para pruebas.", "測試用。")

    class Params(Params):
        top_k: int = param(10, title=ml("Top k", "Top k", "前 k 名"), ge=1, le=1000)
        k1: float = param(1.5, title=ml("k1"), ge=0.0)


@registry.register
class Semantic(Recording):
    KIND = "retriever"
    CATEGORY = "dense"
    ICON = "sparkles"
    REPRESENTATION = ml("Semantic · {encoder.component} · bs {encoder.batch_size} · top {top_k}")
    DISPLAY_NAME = ml("Semantic", "Semantic (es)", "Semantic (zh)")
    DESCRIPTION = ml("A semantic for tests.", "Para pruebas.", "測試用。")

    class Params(Params):
        top_k: int = param(10, title=ml("Top k"), ge=1)
        encoder: ComponentRef = component_param("embedding", title=ml("Encoder"), default=ref("Encoder"))


@registry.register
class Blend(Recording):
    KIND = "retriever"
    CATEGORY = "composite"
    ICON = "shuffle"
    REPRESENTATION = ml("Blend of {children} · top {top_k}")
    DISPLAY_NAME = ml("Blend", "Blend (es)", "Blend (zh)")
    DESCRIPTION = ml("A blend for tests.", "Para pruebas.", "測試用。")

    class Params(Params):
        children: list[ComponentRef] = children_param(
            title=ml("Children"), min_children=1, max_children=4, default=[ref("Keyword"), ref("Semantic")]
        )
        top_k: int = param(10, title=ml("Top k"), ge=1)
        weights: list[float] | None = param(None, title=ml("Weights"))

        @model_validator(mode="after")
        def _weights_match_children(self):
            if self.weights is not None and len(self.weights) != len(self.children):
                raise ValueError(f"weights has {len(self.weights)} values for {len(self.children)} children")
            return self


@registry.register
class Rerank(Recording):
    KIND = "retriever"
    CATEGORY = "re-ranking"
    ICON = "list-ordered"
    DISPLAY_NAME = ml("Rerank", "Rerank (es)", "Rerank (zh)")
    DESCRIPTION = ml("A rerank for tests.", "Para pruebas.", "測試用。")

    class Params(Params):
        children: list[ComponentRef] = children_param(title=ml("Child"), min_children=1, max_children=1)
        top_k: int = param(5, title=ml("Top k"), ge=1)


@registry.register
class ApiKey(ConfigObject):
    KIND = "credential"
    CATEGORY = "credentials"
    ICON = "key-round"
    DISPLAY_NAME = ml("ApiKey", "ApiKey (es)", "ApiKey (zh)")
    DESCRIPTION = ml("A apikey for tests.", "Para pruebas.", "測試用。")

    class Params(Params):
        api_key: SecretStr = param(title=ml("API key"))
        base_url: str | None = param(None, title=ml("Base URL"))


registry.freeze()
