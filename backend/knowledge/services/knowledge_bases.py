"""Creating, changing and deleting knowledge bases."""

from __future__ import annotations

import shutil
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from common.i18n import seeded_text_edit
from common.reach import reach_errors
from rag.components import load_components
from rag.core import ConfigValidationError, FieldError, validate_or_raise
from rag.core.i18n import gettext_noop
from rag.embeddings import default_embedding_for_language
from rag.stores import KnowledgeBaseStores

from ..models import KnowledgeBase, VectorIndex
from ..runtime import chroma_store
from .documents import document_requeue, upload_dir

DEFAULT_CHUNKER: dict[str, Any] = {"component": "RecursiveCharacterChunker", "params": {}}
DEFAULT_METRIC = "cosine"
# Chunkers whose chunk_size counts characters (the token chunker's counts tokens; its chunks
# are checked against the limit at ingestion instead).
CHARACTER_CHUNKERS = frozenset({"RecursiveCharacterChunker"})


def _validated_settings(*, owner: AbstractBaseUser | None, language: str, chunker: Any,
                        embedding_model: Any) -> tuple[dict, dict]:
    registry = load_components()
    errors: list[FieldError] = []
    configs: dict[str, dict] = {}
    for field, kind, raw in (
        ("chunker", "chunker", chunker or DEFAULT_CHUNKER),
        ("embedding_model", "embedding", embedding_model or default_embedding_for_language(language)),
    ):
        try:
            # Reach first (an embedding service's address, a model folder), then availability:
            # saying a folder outside the model folders is missing would say what exists.
            checked = validate_or_raise(raw, registry=registry, kind=kind, path=field)
            unreachable = reach_errors(owner=owner, config=checked, path=field)
            if unreachable:
                errors.extend(unreachable)
                continue
            configs[field] = validate_or_raise(raw, registry=registry, kind=kind, path=field, check_availability=True)
        except ConfigValidationError as exc:
            errors.extend(exc.errors)
    chunk_size = configs.get("chunker", {}).get("params", {}).get("chunk_size")
    if (not errors and configs["chunker"]["component"] in CHARACTER_CHUNKERS and isinstance(chunk_size, int)
            and chunk_size > settings.TRELLIS_MAX_CHUNK_CHARACTERS):
        errors.append(FieldError(
            "chunker.params.chunk_size",
            gettext_noop("must be ≤ {limit} (TRELLIS_MAX_CHUNK_CHARACTERS, the longest chunk this server accepts)"),
            "chunk_too_long",
            {"limit": settings.TRELLIS_MAX_CHUNK_CHARACTERS},
        ))
    if not errors and configs["chunker"]["component"] == "TokenChunker":
        embedding = registry.get(configs["embedding_model"]["component"])(**configs["embedding_model"]["params"])
        if embedding.tokenizer() is None:
            errors.append(FieldError(
                "chunker.component",
                gettext_noop("the token chunker counts tokens with the embedding model's tokenizer, and {model} has none here"),
                "tokenizer_missing",
                {"model": configs["embedding_model"]["component"]},
            ))
    if errors:
        raise ConfigValidationError(errors)
    return configs["chunker"], configs["embedding_model"]


def model_key_of(embedding_config: dict[str, Any]) -> str:
    component = load_components().get(embedding_config["component"])
    return component(**embedding_config["params"]).model_key


def knowledge_base_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    description: str = "",
    language: str = KnowledgeBase.Language.ENGLISH,
    chunker: dict[str, Any] | None = None,
    embedding_model: dict[str, Any] | None = None,
    evaluation_only: bool = False,
) -> KnowledgeBase:
    """Create a knowledge base and the vector index of its embedding model; ``evaluation_only``
    keeps it out of everyday views (``selectors.EVERYDAY``), as an evaluation dataset's corpus.

    Raises
    ------
    ConfigValidationError
        When the chunker or embedding model is invalid or unavailable, with JSON paths
        (``chunker.params.chunk_size``).
    """
    chunker_config, embedding_config = _validated_settings(
        owner=owner, language=language, chunker=chunker, embedding_model=embedding_model
    )
    with transaction.atomic():
        knowledge_base = KnowledgeBase.objects.create(
            owner=owner, name=name, description=description, language=language,
            chunker=chunker_config, embedding_model=embedding_config, evaluation_only=evaluation_only,
        )
        VectorIndex.objects.create(
            knowledge_base=knowledge_base, model_key=model_key_of(embedding_config), metric=DEFAULT_METRIC,
            embedding_model=embedding_config, status=VectorIndex.Status.READY,
        )
    return knowledge_base


def knowledge_base_update(
    *,
    knowledge_base: KnowledgeBase,
    name: str | None = None,
    description: str | None = None,
    chunker: dict[str, Any] | None = None,
) -> KnowledgeBase:
    """Rename or re-describe a knowledge base; a new chunker re-chunks every document."""
    rechunk = False
    if chunker is not None:
        chunker_config, _ = _validated_settings(
            owner=knowledge_base.owner, language=knowledge_base.language, chunker=chunker,
            embedding_model=knowledge_base.embedding_model,
        )
        rechunk = chunker_config != knowledge_base.chunker
        knowledge_base.chunker = chunker_config
    if name is not None:
        seeded_text_edit(knowledge_base, "name", name)
    if description is not None:
        seeded_text_edit(knowledge_base, "description", description)
    with transaction.atomic():
        knowledge_base.save()
        if rechunk:
            knowledge_base_reindex(knowledge_base=knowledge_base)
    return knowledge_base


def knowledge_base_promote(*, knowledge_base: KnowledgeBase) -> KnowledgeBase:
    """Make an evaluation corpus an ordinary knowledge base: listed, offered to pipelines and
    searchable as an MCP tool. Promoting an ordinary one changes nothing."""
    if knowledge_base.evaluation_only:
        knowledge_base.evaluation_only = False
        knowledge_base.save(update_fields=["evaluation_only", "updated_at"])
    return knowledge_base


def knowledge_base_reindex(*, knowledge_base: KnowledgeBase) -> int:
    """Parse, chunk, embed and index every document again; returns how many were queued."""
    documents = list(knowledge_base.documents.all())
    for document in documents:
        document_requeue(document=document)
    return len(documents)


def knowledge_base_delete(*, knowledge_base: KnowledgeBase) -> None:
    """Delete a knowledge base with its documents, chunks, files and every index."""
    knowledge_base_id = knowledge_base.pk
    uploads = upload_dir(knowledge_base_id)
    with transaction.atomic():
        # A running ingestion finds its document gone and stops without writing.
        knowledge_base.delete()
        transaction.on_commit(lambda: KnowledgeBaseStores.drop(
            knowledge_base_id=knowledge_base_id, data_dir=settings.DATA_DIR, chroma=chroma_store()
        ))
        transaction.on_commit(lambda: shutil.rmtree(uploads, ignore_errors=True))
