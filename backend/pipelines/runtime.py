"""The pipelines app's engine objects: a saved pipeline built into a runnable strategy, once per
version of the pipeline and of its knowledge base's content, and shared by every chat.

A ``runtime`` module (here and in ``knowledge``) is neither a read for a client (``selectors``)
nor a write (``services``): it turns rows into engine objects and keeps them for the process.
Its functions take the row they build from as their one argument."""

from __future__ import annotations

import threading
from collections import OrderedDict

from common.outbound import outbound_policy_for
from common.reach import reach_errors
from credentials.services import credential_resolver_for
from knowledge.runtime import retriever_infra
from rag.components import load_components
from rag.core import ConfigValidationError, build
from rag.strategies import Strategy

from .models import Pipeline

_lock = threading.Lock()
_built: OrderedDict[tuple, Strategy] = OrderedDict()
_building: dict[tuple, threading.Lock] = {}
_CACHE_SIZE = 8


def pipeline_strategy(pipeline: Pipeline) -> Strategy:
    """The built strategy of ``pipeline`` over its knowledge base's current chunks."""
    knowledge_base = pipeline.knowledge_base
    key = (pipeline.pk, pipeline.updated_at.isoformat(), knowledge_base.pk, knowledge_base.content_version)
    with _lock:
        if key in _built:
            _built.move_to_end(key)
            return _built[key]
        building = _building.setdefault(key, threading.Lock())
    # One build per version: questions arriving together wait for it instead of each loading
    # the chunks and indices again.
    with building:
        with _lock:
            if key in _built:
                return _built[key]
        # Checked again at every build: the policy, or what a host name points at, may have changed.
        unreachable = reach_errors(owner=pipeline.owner, config=pipeline.strategy, path="strategy")
        if unreachable:
            raise ConfigValidationError(unreachable)
        # The owner's outbound policy goes with the components: each connection they open meets it.
        infra = {**retriever_infra(knowledge_base), "outbound": outbound_policy_for(pipeline.owner)}
        strategy = build(pipeline.strategy, kind="strategy", registry=load_components(),
                         infra=infra, credentials=credential_resolver_for(pipeline.owner))
        with _lock:
            _built[key] = strategy
            _building.pop(key, None)
            while len(_built) > _CACHE_SIZE:
                _built.popitem(last=False)
    return strategy
