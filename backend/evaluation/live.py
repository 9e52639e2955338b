"""Live quality: score a retriever tree on a pipeline's test set while it is edited, against the
saved version, fast enough to run after every edit (``rag.evaluation.live`` does the scoring).

A test set is an imported evaluation dataset over the same knowledge base (its queries and
judgements), or golden questions, each with the knowledge base's documents that should come back.
Scores are kept per version of the tree, the test set and the knowledge base's content, so the
saved version is scored once per editing session. Nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from knowledge.models import Document, KnowledgeBase
from pipelines.playground import LanguageModelConsentNeeded, built_retriever, language_model_nodes
from pipelines.services import strategy_validate
from rag.core import ConfigValidationError, FieldError
from rag.core.i18n import gettext_noop
from rag.evaluation.live import GoldenQuestion, quality_summary, question_scores

from .models import EvaluationDataset, PipelineTestSet
from .selectors import dataset_get

MAX_QUESTIONS = 200
DEFAULT_QUESTIONS = 50

_lock = threading.Lock()
_scored: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
_CACHE_SIZE = 32


def test_set_validate(*, owner: AbstractBaseUser, knowledge_base: KnowledgeBase, test_set: Any,
                      path: str = "test_set") -> dict[str, Any]:
    """The test set as stored: ``{"dataset": id}`` or ``{"questions": [{"question", "documents"}]}``,
    or ``ConfigValidationError`` with every problem at its path."""
    if not isinstance(test_set, dict) or len(test_set) != 1 or not ({"dataset", "questions"} & set(test_set)):
        raise ConfigValidationError([FieldError(path, gettext_noop(
            'must be {{"dataset": <id>}} or {{"questions": [{{"question": …, "documents": [<id>, …]}}]}}'),
            "test_set_shape")])
    if "dataset" in test_set:
        dataset = _dataset(owner, knowledge_base, test_set["dataset"], f"{path}.dataset")
        return {"dataset": dataset.pk}
    questions = test_set["questions"]
    errors: list[FieldError] = []
    if not isinstance(questions, list) or not 1 <= len(questions) <= MAX_QUESTIONS:
        raise ConfigValidationError([FieldError(f"{path}.questions", gettext_noop(
            "must list between 1 and {max} questions"), "test_set_size", {"max": MAX_QUESTIONS})])
    known = set(Document.objects.filter(knowledge_base=knowledge_base).values_list("pk", flat=True))
    cleaned = []
    for index, item in enumerate(questions):
        where = f"{path}.questions[{index}]"
        text = item.get("question") if isinstance(item, dict) else None
        documents = item.get("documents") if isinstance(item, dict) else None
        if not isinstance(text, str) or not text.strip() or len(text) > 2000:
            errors.append(FieldError(f"{where}.question", gettext_noop(
                "must be a question of 1 to 2000 characters"), "question_text"))
        if (not isinstance(documents, list) or not documents
                or not all(isinstance(document, int) and not isinstance(document, bool) for document in documents)):
            errors.append(FieldError(f"{where}.documents", gettext_noop(
                "must name at least one document that should come back"), "question_documents"))
        elif unknown := [document for document in documents if document not in known]:
            errors.append(FieldError(f"{where}.documents", gettext_noop(
                "names documents this knowledge base does not hold: {ids}"), "unknown_documents",
                {"ids": ", ".join(map(str, unknown))}))
        else:
            cleaned.append({"question": text.strip(), "documents": sorted(set(documents))})
    if errors:
        raise ConfigValidationError(errors)
    return {"questions": cleaned}


def _dataset(owner: AbstractBaseUser, knowledge_base: KnowledgeBase, dataset_id: Any, path: str) -> EvaluationDataset:
    try:
        dataset = dataset_get(user=owner, dataset_id=int(dataset_id))
    except (EvaluationDataset.DoesNotExist, TypeError, ValueError):
        raise ConfigValidationError([FieldError(path, gettext_noop("no such evaluation dataset"),
                                                "unknown_dataset")]) from None
    if dataset.knowledge_base_id != knowledge_base.pk:
        raise ConfigValidationError([FieldError(path, gettext_noop(
            "judges documents of the knowledge base {dataset}, not of {knowledge_base}"), "dataset_elsewhere",
            {"dataset": dataset.knowledge_base.name, "knowledge_base": knowledge_base.name})])
    return dataset


def _questions(owner: AbstractBaseUser, knowledge_base: KnowledgeBase, test_set: dict[str, Any],
               limit: int) -> tuple[list[GoldenQuestion], Callable[[int], str | None]]:
    """The first ``limit`` judged questions, and how a retrieved document is keyed in their judgements."""
    if "dataset" in test_set:
        dataset = _dataset(owner, knowledge_base, test_set["dataset"], "test_set.dataset")
        corpus_ids = {int(document): corpus for document, corpus in dataset.corpus_ids.items()}
        judged = [GoldenQuestion(str(query["id"]), query["text"], dataset.qrels.get(str(query["id"]), {}))
                  for query in dataset.queries]
        judged = [question for question in judged if any(grade > 0 for grade in question.judgements.values())]
        return judged[:limit], corpus_ids.get
    golden = [GoldenQuestion(str(index), item["question"], {str(document): 1 for document in item["documents"]})
              for index, item in enumerate(test_set["questions"])]
    return golden[:limit], lambda document_id: str(document_id)


def tree_quality(
    *,
    owner: AbstractBaseUser,
    knowledge_base: KnowledgeBase,
    retriever: Any,
    test_set: Any,
    baseline: Any = None,
    limit: int = DEFAULT_QUESTIONS,
    allow_llm: bool = False,
) -> dict[str, Any]:
    """nDCG@10 and Recall@10 of ``retriever`` on the test set's first ``limit`` questions, with
    intervals; with ``baseline`` (the saved tree), each metric's paired change and whether it is
    within noise. Raises ``ConfigValidationError`` (paths under ``retriever``, ``baseline`` and
    ``test_set``) and ``LanguageModelConsentNeeded`` as the playground does."""
    started = time.perf_counter()
    test_set = test_set_validate(owner=owner, knowledge_base=knowledge_base, test_set=test_set)
    trees = {"retriever": strategy_validate(owner=owner, strategy=retriever, kind="retriever", path="retriever")}
    if baseline is not None:
        trees["baseline"] = strategy_validate(owner=owner, strategy=baseline, kind="retriever", path="baseline")
    models = [node for name, config in trees.items() for node in language_model_nodes(config, path=name)]
    if models and not allow_llm:
        raise LanguageModelConsentNeeded(models)
    questions, document_key = _questions(owner, knowledge_base, test_set, limit)
    scored = {name: _scores(owner, knowledge_base, config, test_set, questions, document_key)
              for name, config in trees.items()}
    summary = quality_summary(scored["retriever"], scored.get("baseline"))
    summary["baseline"] = (quality_summary(scored["baseline"])["metrics"] if "baseline" in scored else None)
    summary["llm_calls"] = sum(row["llm_calls"] for rows in scored.values() for row in rows)
    summary["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return summary


def _scores(owner: AbstractBaseUser, knowledge_base: KnowledgeBase, config: dict[str, Any], test_set: dict[str, Any],
            questions: list[GoldenQuestion], document_key: Callable[[int], str | None]) -> list[dict[str, Any]]:
    identity = json.dumps([owner.pk, knowledge_base.pk, knowledge_base.content_version, config, test_set,
                           [question.id for question in questions]], sort_keys=True)
    key = hashlib.sha256(identity.encode()).hexdigest()
    with _lock:
        if key in _scored:
            _scored.move_to_end(key)
            return _scored[key]
    rows = question_scores(built_retriever(owner, knowledge_base, config), questions, document_key)
    with _lock:
        _scored[key] = rows
        while len(_scored) > _CACHE_SIZE:
            _scored.popitem(last=False)
    return rows


def pipeline_test_set_save(*, pipeline: Any, test_set: Any) -> dict[str, Any]:
    """Attach (or replace) the pipeline's test set, validated against its knowledge base."""
    definition = test_set_validate(owner=pipeline.owner, knowledge_base=pipeline.knowledge_base, test_set=test_set)
    PipelineTestSet.objects.update_or_create(pipeline=pipeline, defaults={"definition": definition})
    return definition


def pipeline_test_set_delete(*, pipeline: Any) -> None:
    PipelineTestSet.objects.filter(pipeline=pipeline).delete()
