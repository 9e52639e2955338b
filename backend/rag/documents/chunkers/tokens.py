"""Token windows, counted with the tokenizer of the knowledge base's embedding model."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import model_validator

from rag.core import Params, ml, param, register

from ..errors import DocumentError
from .base import Chunker


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that can say where the tokens of a text are."""

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character spans of the tokens of ``text``, in order."""
        ...


class HuggingFaceTokenizer:
    """A transformers *fast* tokenizer seen as a ``Tokenizer``.

    Parameters
    ----------
    tokenizer
        A ``PreTrainedTokenizerFast`` (``AutoTokenizer.from_pretrained(...)`` returns one for
        every common model); slow tokenizers cannot report offsets and are refused.
    """

    def __init__(self, tokenizer: Any) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError(f"{type(tokenizer).__name__} is not a fast tokenizer, so it cannot report token offsets")
        self.tokenizer = tokenizer

    @classmethod
    def from_pretrained(cls, name_or_path: str) -> HuggingFaceTokenizer:
        """Load the tokenizer of a local model directory (or a cached hub name)."""
        from transformers import AutoTokenizer

        return cls(AutoTokenizer.from_pretrained(name_or_path, use_fast=True))

    def offsets(self, text: str) -> list[tuple[int, int]]:
        encoding = self.tokenizer(
            text,
            add_special_tokens=False,
            return_offsets_mapping=True,
            return_attention_mask=False,
            return_token_type_ids=False,
            # The text is longer than the model's input on purpose: it is about to be cut.
            verbose=False,
        )
        return [(int(start), int(end)) for start, end in encoding["offset_mapping"] if end > start]


@register
class TokenChunker(Chunker["TokenChunker.Params"]):
    """Windows of ``chunk_size`` tokens, each sharing ``chunk_overlap`` tokens with the last.

    Tokens are those of the knowledge base's embedding model, so a chunk is never truncated
    when it is embedded. The tokenizer arrives through ``inject_infra(tokenizer=...)``; a
    chunk's text is the original text from its first token's start to its last token's end,
    never decoded tokens (which lose case and accents with uncased models).
    """

    ICON = "split"
    DISPLAY_NAME = ml("Token splitter", "Divisor por tokens", "詞元分割器")
    SHORT_NAME = ml("Tokens", "Tokens", "詞元")
    DESCRIPTION = ml(
        "Cuts text into windows of a fixed number of tokens, counted with the tokenizer of the knowledge "
        "base's embedding model, so no chunk is truncated when it is embedded.",
        "Corta el texto en ventanas de un número fijo de tokens, contados con el tokenizador del modelo de "
        "embeddings de la base de conocimiento, para que ningún fragmento se trunque al calcular su embedding.",
        "以知識庫嵌入模型的分詞器計算詞元，將文字切成固定詞元數的視窗，確保每個區塊在嵌入時都不會被截斷。",
    )
    REPRESENTATION = ml(
        "Tokens · {chunk_size} · overlap {chunk_overlap}",
        "Tokens · {chunk_size} · solapamiento {chunk_overlap}",
        "詞元 · {chunk_size} · 重疊 {chunk_overlap}",
    )

    class Params(Params):
        chunk_size: int = param(
            256,
            title=ml("Chunk size (tokens)", "Tamaño del fragmento (tokens)", "區塊大小（詞元）"),
            description=ml(
                "The most tokens a chunk may hold; keep it within the embedding model's input limit.",
                "Número máximo de tokens de un fragmento; manténgalo dentro del límite de entrada del modelo "
                "de embeddings.",
                "每個區塊最多可容納的詞元數；請勿超過嵌入模型的輸入上限。",
            ),
            ge=8,
            le=8192,
        )
        chunk_overlap: int = param(
            32,
            title=ml("Overlap (tokens)", "Solapamiento (tokens)", "重疊（詞元）"),
            description=ml(
                "How many tokens from the end of a chunk are repeated at the start of the next. Must be "
                "smaller than the chunk size.",
                "Cuántos tokens del final de un fragmento se repiten al comienzo del siguiente. Debe ser menor "
                "que el tamaño del fragmento.",
                "每個區塊結尾有多少詞元會在下一個區塊開頭重複。必須小於區塊大小。",
            ),
            ge=0,
            le=8191,
        )

        @model_validator(mode="after")
        def _check(self) -> TokenChunker.Params:
            if self.chunk_overlap >= self.chunk_size:
                raise ValueError(
                    f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})"
                )
            return self

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._tokenizer: Tokenizer | None = None

    def inject_infra(self, *, tokenizer: Tokenizer | None = None, **infra: Any) -> None:
        """Receive ``tokenizer``, the embedding model's (other infrastructure is ignored)."""
        if tokenizer is not None:
            if not isinstance(tokenizer, Tokenizer):
                raise TypeError(f"a tokenizer needs an offsets(text) method; {type(tokenizer).__name__} has none")
            self._tokenizer = tokenizer

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self._tokenizer is None:
            raise DocumentError(
                "TokenChunker has no tokenizer: it counts tokens with the knowledge base's embedding model, "
                "which must be given through inject_infra(tokenizer=...)"
            )
        offsets = self._tokenizer.offsets(text)
        size, step = self.params.chunk_size, self.params.chunk_size - self.params.chunk_overlap
        spans = []
        for first in range(0, len(offsets), step):
            window = offsets[first:first + size]
            spans.append((min(start for start, _ in window), max(end for _, end in window)))
            if first + size >= len(offsets):
                break
        return spans
