"""Writes of the pipelines app: save (validated), duplicate, import, delete."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from common.i18n import seeded_text_edit
from common.outbound import outbound_policy_for
from common.reach import reach_errors
from credentials.selectors import credential_destinations, credential_named
from knowledge.models import KnowledgeBase
from knowledge.services import vector_index_ensure
from rag.clients.outbound import origin
from rag.components import load_components
from rag.core import ConfigValidationError, FieldError, MultilingualString, credential_references, ml, validate_tree
from rag.core.i18n import gettext_noop
from rag.core.multilingual import LANGUAGES
from rag.credentials.base import CredentialDestinationError, CredentialOutboundError
from rag.presets import default_retriever, fusion_sentence, preset

from .models import Pipeline
from .selectors import dense_requirements

DOCUMENT_VERSION = 1


def _credential_errors(owner: AbstractBaseUser, config: dict[str, Any], path: str) -> list[FieldError]:
    """A credential the owner lacks, one the tree would send to a server it is not bound to, or
    to an address the owner's pipelines may not reach (a credential's own base URL included)."""
    registry = load_components()
    policy = outbound_policy_for(owner)
    errors = []
    for where, name, node in credential_references(config, registry=registry):
        credential = credential_named(user=owner, name=name)
        if credential is None:
            errors.append(FieldError(f"{path}.{where}", gettext_noop(
                "no credential named {name!r} is available to you; add it under Credentials"),
                "unknown_credential", {"name": name}))
            continue
        allowed = credential_destinations(user=owner, name=name) or []
        destination = registry.get(node["component"]).credential_destination(node["params"], credential.public_params)
        if origin(destination) not in allowed:
            error = CredentialDestinationError(name, allowed, origin(destination) or str(destination))
            errors.append(FieldError(f"{path}.{where}", error.template, error.code, error.context))
        elif policy is not None and destination and policy.problem(destination):
            refused = CredentialOutboundError(name, origin(destination) or str(destination))
            errors.append(FieldError(f"{path}.{where}", refused.template, refused.code, refused.context))
    return errors


def strategy_validate(*, owner: AbstractBaseUser, strategy: Any, path: str = "strategy",
                      kind: str = "strategy") -> dict[str, Any]:
    """The normalised strategy (or, with ``kind``, another component tree), or
    ``ConfigValidationError`` with every problem at its path: the tree's own errors, components
    that cannot run here, and credentials the owner lacks."""
    # What the owner may reach is checked before whether a model is there: telling a user that a
    # file outside the model folders does not exist would tell them what does.
    config, errors = validate_tree(strategy, registry=load_components(), kind=kind, path=path)
    if errors:
        raise ConfigValidationError(errors)
    assert config is not None
    unreachable = reach_errors(owner=owner, config=config, path=path)
    if unreachable:
        raise ConfigValidationError(unreachable)
    config, errors = validate_tree(strategy, registry=load_components(), kind=kind, path=path,
                                   check_availability=True)
    if errors:
        raise ConfigValidationError(errors)
    assert config is not None
    problems = _credential_errors(owner, config, path)
    if problems:
        raise ConfigValidationError(problems)
    return config


def _ensure_indexes(pipeline: Pipeline) -> None:
    """Queue the vector indexes the pipeline's dense retrievers need and the knowledge base lacks."""
    for embedding, metric in dense_requirements(pipeline.strategy, pipeline.knowledge_base):
        vector_index_ensure(knowledge_base=pipeline.knowledge_base, embedding_config=embedding, metric=metric)


def _name_error(owner: AbstractBaseUser, name: str, exclude: int | None = None) -> None:
    taken = Pipeline.objects.filter(owner=owner, name=name)
    if exclude is not None:
        taken = taken.exclude(pk=exclude)
    if taken.exists():
        raise ConfigValidationError([FieldError("name", gettext_noop("you already have a pipeline named {name!r}"),
                                                "duplicate_name", {"name": name})])


def pipeline_create(
    *, owner: AbstractBaseUser, name: str, knowledge_base: KnowledgeBase, strategy: Any, description: str = ""
) -> Pipeline:
    """Save a new pipeline; raises ``ConfigValidationError`` with paths such as
    ``strategy.params.retriever.params.top_k``."""
    config = strategy_validate(owner=owner, strategy=strategy)
    _name_error(owner, name)
    with transaction.atomic():
        pipeline = Pipeline.objects.create(owner=owner, name=name, description=description,
                                           knowledge_base=knowledge_base, strategy=config)
        _ensure_indexes(pipeline)
    return pipeline


def pipeline_update(
    *,
    pipeline: Pipeline,
    name: str | None = None,
    description: str | None = None,
    knowledge_base: KnowledgeBase | None = None,
    strategy: Any = None,
) -> Pipeline:
    if strategy is not None:
        pipeline.strategy = strategy_validate(owner=pipeline.owner, strategy=strategy)
    if name is not None:
        seeded_text_edit(pipeline, "name", name)
        _name_error(pipeline.owner, pipeline.name, exclude=pipeline.pk)
    if description is not None:
        seeded_text_edit(pipeline, "description", description)
    if knowledge_base is not None:
        pipeline.knowledge_base = knowledge_base
    with transaction.atomic():
        pipeline.save()
        _ensure_indexes(pipeline)
    return pipeline


def pipeline_delete(*, pipeline: Pipeline) -> None:
    pipeline.delete()


def _free_name(owner: AbstractBaseUser, wanted: str) -> str:
    name, number = wanted, 2
    while Pipeline.objects.filter(owner=owner, name=name).exists():
        name, number = f"{wanted} ({number})", number + 1
    return name


def pipeline_duplicate(*, pipeline: Pipeline) -> Pipeline:
    """A copy named "<name> (copy)" (numbered when that is taken)."""
    return pipeline_create(owner=pipeline.owner, name=_free_name(pipeline.owner, f"{pipeline.name} (copy)"),
                           knowledge_base=pipeline.knowledge_base, strategy=pipeline.strategy,
                           description=pipeline.description)


def pipeline_document_knowledge_base(*, owner: AbstractBaseUser, document: Any) -> KnowledgeBase | None:
    """The knowledge base an exported document names, when ``owner`` has it: the same one (by
    id), or else the only one of the owner's with that name (a document from another install)."""
    named = document.get("knowledge_base") if isinstance(document, dict) else None
    if not isinstance(named, dict):
        return None
    owned = KnowledgeBase.objects.filter(owner=owner)
    if isinstance(named.get("id"), int) and (same := owned.filter(pk=named["id"]).first()) is not None:
        return same
    if isinstance(named.get("name"), str):
        matches = list(owned.filter(name=named["name"])[:2])
        if len(matches) == 1:
            return matches[0]
    return None


def pipeline_import(*, owner: AbstractBaseUser, document: Any, knowledge_base: KnowledgeBase | None = None) -> Pipeline:
    """Create a pipeline from an exported document; errors carry ``document.`` paths.

    Without ``knowledge_base`` the pipeline goes over the one the document was exported from,
    when ``owner`` has it; otherwise the caller must say which.
    """
    errors = []
    if not isinstance(document, dict):
        raise ConfigValidationError([FieldError("document", gettext_noop(
            'must be an object like {example}'), "document_type",
            {"example": '{"name": "...", "version": 1, "strategy": {...}}'})])
    knowledge_base = knowledge_base or pipeline_document_knowledge_base(owner=owner, document=document)
    if knowledge_base is None:
        errors.append(FieldError("knowledge_base", gettext_noop(
            "Choose the knowledge base to import into: the file names none of yours"), "required"))
    name = document.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append(FieldError("document.name", gettext_noop("is required"), "missing"))
    if document.get("version") != DOCUMENT_VERSION:
        errors.append(FieldError("document.version", gettext_noop("must be {version}"), "version",
                                 {"version": DOCUMENT_VERSION}))
    unknown = sorted(set(document) - {"name", "version", "strategy", "description", "knowledge_base"})
    errors += [FieldError(f"document.{key}", gettext_noop("is not part of a pipeline document"), "unknown_key")
               for key in unknown]
    try:
        config = strategy_validate(owner=owner, strategy=document.get("strategy"), path="document.strategy")
    except ConfigValidationError as exc:
        errors += exc.errors
    if errors:
        raise ConfigValidationError(errors)
    assert knowledge_base is not None
    return pipeline_create(owner=owner, name=_free_name(owner, name.strip()), knowledge_base=knowledge_base,
                           strategy=config, description=str(document.get("description", "")))


DEMO_PIPELINE_NAME = preset("hybrid").display_name.get("en")


def pipeline_seed_demo(*, owner: AbstractBaseUser, knowledge_base: KnowledgeBase) -> Pipeline | None:
    """Give ``owner`` the default pipeline (NaiveRAG over the Hybrid preset, the local model)
    over ``knowledge_base`` once, so the chat answers at once; None when it exists already."""
    if Pipeline.objects.filter(owner=owner, knowledge_base=knowledge_base, name=DEMO_PIPELINE_NAME).exists():
        return None
    strategy = {"component": "NaiveRAG", "params": {"retriever": default_retriever()}}
    name = _free_name(owner, DEMO_PIPELINE_NAME)
    description = pipeline_demo_description(strategy)
    pipeline = pipeline_create(owner=owner, name=name, knowledge_base=knowledge_base, strategy=strategy,
                               description=description.get("en"))
    # Shown in the reader's language until the owner edits them (``common.i18n.seeded_text``).
    pipeline.translations = {"description": description.to_dict()}
    if name == DEMO_PIPELINE_NAME:
        pipeline.translations["name"] = preset("hybrid").display_name.to_dict()
    pipeline.save(update_fields=["translations"])
    return pipeline


_DEMO_DESCRIPTION = ml("The recommended starting point: {retrieval}, answered by the local model.",
                       "El punto de partida recomendado: {retrieval}; responde el modelo local.",
                       "建議的起點：{retrieval}，由本機模型回答。")


def pipeline_demo_description(strategy: dict[str, Any]) -> MultilingualString:
    """The demo pipeline's description, its retrieval read off ``strategy`` (``fusion_sentence``)
    so that it says what the pipeline does whatever the Hybrid preset becomes."""
    retrieval = fusion_sentence(strategy)
    return MultilingualString.from_dict({language: _DEMO_DESCRIPTION.get(language).format(
        retrieval=retrieval.get(language)) for language in LANGUAGES})
