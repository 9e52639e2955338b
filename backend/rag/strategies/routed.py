"""``RoutedStrategy``: send each question to the branch that fits it."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import model_validator

from rag.core import (
    ComponentRef,
    ConfigObject,
    Params,
    TrellisError,
    children_param,
    component_param,
    ml,
    param,
    register,
)

from .base import RunContext, Strategy
from .slots import Classifier, Router

Predicate = Callable[[str], "bool | Awaitable[bool]"]

NO_MATCH = "no_match"
"""The reserved route meaning "no branch fits"; it cannot name a branch."""

NO_MATCH_ANSWER = {
    "en": "None of this pipeline's branches handles this question.",
    "es": "Ninguna rama de este pipeline atiende esta pregunta.",
    "zh-Hant": "此流程沒有任何分支能處理這個問題。",
    "zh-Hans": "此流程没有任何分支能处理这个问题。",
}


class ClassifierAnswerError(TrellisError, ValueError):
    """A Python classifier answered something other than True or False; the message says what."""


def branch_problem(branches: list[tuple[str | None, bool]], *, router: bool) -> str | None:
    """Why ``(name, has classifier)`` branches do not form a valid routing, or None."""
    names = [name for name, _ in branches]
    if NO_MATCH in names:
        return f"{NO_MATCH!r} is reserved for questions no branch takes; name the branch otherwise"
    duplicates = sorted({name for name in names if name is not None and names.count(name) > 1})
    if duplicates:
        return f"branch names must be unique; repeated: {', '.join(duplicates)}"
    with_classifier = [name for name, classified in branches if classified]
    without = [name for name, classified in branches if not classified]
    if router and with_classifier:
        return f"router mode and classifier mode do not mix: branches {with_classifier} have classifiers"
    if not router and without:
        return f"in classifier mode every branch needs a classifier: {without} have none"
    return None


class PredicateClassifier(Classifier[Params]):
    """A Python predicate ``question -> bool`` (or an awaitable of one) as a classifier.

    Exists only in Python: a strategy holding one is not saved as JSON (its configuration names
    the function, and no registered component has that name).
    """

    NAME = "PredicateClassifier"
    DISPLAY_NAME = ml("Python predicate", "Predicado de Python", "Python 判斷函式")
    DESCRIPTION = ml("A Python function deciding whether a branch takes the question.",
                     "Una función de Python que decide si una rama toma la pregunta.",
                     "決定分支是否接手問題的 Python 函式。")

    def __init__(self, predicate: Predicate) -> None:
        super().__init__()
        self.predicate = predicate
        self.label = getattr(predicate, "__qualname__", None) or type(predicate).__name__

    def to_config(self) -> dict[str, Any]:
        return {"component": self.NAME, "params": {"function": self.label}}

    def matches(self, question: str) -> bool:
        """The predicate's verdict; an awaitable is awaited (on a loop of its own when this
        thread already runs one). Anything but ``True`` or ``False`` is a ``ValueError``."""
        verdict = self.predicate(question)
        if inspect.isawaitable(verdict):
            verdict = _wait(verdict)
        if not isinstance(verdict, bool):
            raise ClassifierAnswerError(f"the classifier {self.label} must return True or False, got {verdict!r}")
        return verdict


def _wait(awaitable: Awaitable[Any]) -> Any:
    async def result() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(result())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="trellis-predicate") as pool:
        return pool.submit(asyncio.run, result()).result()


@register
class RouteBranch(ConfigObject["RouteBranch.Params"]):
    """One branch of a routed strategy: a name, a strategy, and (classifier mode) a classifier."""

    KIND = "route_branch"
    CATEGORY = "routing"
    ICON = "git-branch"
    DISPLAY_NAME = ml("Branch", "Rama", "分支")
    DESCRIPTION = ml(
        "A named branch: the strategy that answers the questions routed to it.",
        "Una rama con nombre: la estrategia que responde las preguntas que se le envían.",
        "具名的分支：負責回答被分派到此處之問題的策略。",
    )
    REPRESENTATION = ml(
        "{name} · {classifier.component|router decides} → {strategy.component}",
        "{name} · {classifier.component|decide el enrutador} → {strategy.component}",
        "{name} · {classifier.component|由路由器決定} → {strategy.component}",
    )

    # Built from the slots of ``Params``.
    classifier: Classifier | None
    strategy: Strategy

    class Params(Params):
        name: str = param(
            ..., min_length=1, max_length=64, pattern=r"^[\w\-. ]+$",
            title=ml("Name", "Nombre", "名稱"),
            description=ml("What the router calls this branch.", "Cómo llama el enrutador a esta rama.",
                           "路由器用來稱呼此分支的名稱。"),
        )
        classifier: ComponentRef | None = component_param(
            "classifier", optional=True,
            title=ml("Classifier", "Clasificador", "分類器"),
            description=ml(
                "Classifier mode: the first branch whose classifier matches takes the question.",
                "Modo clasificador: la primera rama cuyo clasificador coincide toma la pregunta.",
                "分類器模式：第一個分類器相符的分支會接手問題。",
            ),
        )
        strategy: ComponentRef = component_param(
            "strategy", default={"component": "NaiveRAG", "params": {}},
            title=ml("Strategy", "Estrategia", "策略"),
            description=ml("Answers this branch's questions.", "Responde las preguntas de esta rama.",
                           "回答此分支的問題。"),
        )

    EXAMPLE_PARAMS = {"name": "general"}


@register
class RoutedStrategy(Strategy["RoutedStrategy.Params"]):
    """Routes each question to one branch (DESIGN §6).

    Classifier mode: branches are tried in order and the first whose classifier matches takes
    the question. Router mode (``set_router``): a router chooses among the branch names. When
    nothing fits (the router answers ``no_match`` or a name that is not a branch), the
    ``no_match`` strategy answers, or a plain "no branch" reply when there is none. The branch
    taken and why are in the trace, with the branch's own trace nested.
    """

    ICON = "split"
    DISPLAY_NAME = ml("Routed strategy", "Estrategia enrutada", "路由策略")
    SHORT_NAME = ml("Routed", "Enrutada", "路由")
    DESCRIPTION = ml(
        "Sends each question to the branch that fits it, chosen by keyword classifiers or an LLM router.",
        "Envía cada pregunta a la rama adecuada, elegida por clasificadores de palabras clave o un enrutador LLM.",
        "依關鍵字分類器或 LLM 路由器，將每個問題送往合適的分支。",
    )
    REPRESENTATION = ml(
        "Routed · {branches.name} · router {router.component|classifiers}",
        "Enrutada · {branches.name} · enrutador {router.component|clasificadores}",
        "路由 · {branches.name} · 路由器 {router.component|分類器}",
    )

    # Built from the slots of ``Params``.
    branches: list[RouteBranch]
    router: Router | None
    no_match: Strategy | None

    class Params(Params):
        branches: list[ComponentRef] = children_param(
            "route_branch", min_children=0, default=[],
            title=ml("Branches", "Ramas", "分支"),
            description=ml("Tried in order in classifier mode.", "Se prueban en orden en modo clasificador.",
                           "分類器模式下依序嘗試。"),
        )
        router: ComponentRef | None = component_param(
            "router", optional=True,
            title=ml("Router", "Enrutador", "路由器"),
            description=ml("Router mode: chooses the branch by name.", "Modo enrutador: elige la rama por su nombre.",
                           "路由器模式：依名稱選擇分支。"),
        )
        no_match: ComponentRef | None = component_param(
            "strategy", optional=True,
            title=ml("When no branch fits", "Cuando ninguna rama encaja", "沒有分支相符時"),
            description=ml("Answers questions no branch takes; empty gives a short refusal.",
                           "Responde las preguntas que ninguna rama toma; vacío da una breve negativa.",
                           "回答沒有分支接手的問題；留空則簡短拒絕。"),
        )

        @model_validator(mode="after")
        def _modes_do_not_mix(self) -> RoutedStrategy.Params:
            problem = branch_problem([(branch.params.get("name"), branch.params.get("classifier") is not None)
                                      for branch in self.branches], router=self.router is not None)
            if problem:
                raise ValueError(problem)
            return self

    def _check(self, branches: list[Any], router: Any) -> None:
        problem = branch_problem([(branch.params.name, branch.classifier is not None) for branch in branches],
                                 router=router is not None)
        if problem:
            raise ValueError(problem)

    # -- the Python API ---------------------------------------------------------------------

    def add_branch(self, name: str, classifier: Any = None, branch: Any = None) -> RoutedStrategy:
        """Add a routed branch.

        Parameters
        ----------
        name : str
            Unique branch name.
        classifier : Callable[[str], bool | Awaitable[bool]] or Classifier or dict, optional
            Classifier mode: a Python predicate on the question (sync or async), a classifier
            component or its reference. Omitted in router mode.
        branch : Strategy or dict
            The branch's strategy, a strategy reference, or a pipeline document
            (``{"name", "version", "strategy"}``).

        Returns
        -------
        RoutedStrategy
            This strategy, for fluent chaining.

        Raises
        ------
        ValueError
            When the name is the reserved no-match name or already taken, when the classifier
            does not fit the routing mode, or when ``branch`` is missing.
        """
        if branch is None:
            raise ValueError(f"branch {name!r} needs a strategy or pipeline")
        if isinstance(branch, dict) and "strategy" in branch and "component" not in branch:
            branch = branch["strategy"]
        if callable(classifier) and not isinstance(classifier, ConfigObject):
            classifier = PredicateClassifier(classifier)
        candidate = RouteBranch(name=name, classifier=classifier, strategy=branch)
        self._check([*self.branches, candidate], self.router)
        self.branches.append(candidate)
        return self

    def set_router(self, router: Any) -> RoutedStrategy:
        """Switch to router mode, or replace the router: the branches stay, and the next run
        uses the new router.

        Returns
        -------
        RoutedStrategy
            This strategy, for fluent chaining.

        Raises
        ------
        ValueError
            If classifier branches are already registered, or ``router`` is not a router.
        """
        self._check(self.branches, router)
        if isinstance(router, dict):
            router = self.registry().get(router["component"])(**router.get("params", {}))
        if router.KIND != "router":
            raise ValueError(f"{router.NAME} is a {router.KIND}, not a router")
        self.router = router
        return self

    def branch(self, name: str) -> RouteBranch:
        """The branch called ``name``."""
        for candidate in self.branches:
            if candidate.params.name == name:
                return candidate
        raise KeyError(f"no branch named {name!r}; branches: {', '.join(b.params.name for b in self.branches)}")

    # -- running ----------------------------------------------------------------------------

    def _choose(self, run: RunContext) -> tuple[Any | None, dict[str, Any]]:
        question = run.state["question"]
        names = [branch.params.name for branch in self.branches]
        if self.router is not None:
            decision = self.router.route(question, [*names, NO_MATCH])
            chosen = next((branch for branch in self.branches if branch.params.name == decision.route), None)
            return chosen, {"mode": "router", "route": decision.route, "why": decision.reason,
                            "details": decision.details}
        for branch in self.branches:
            classifier = branch.classifier
            if classifier is None:  # refused when the branches were set; kept for a readable error
                raise TrellisError(f"in classifier mode every branch needs a classifier: {branch.params.name!r} has none")
            if classifier.matches(question):
                label = getattr(classifier, "label", classifier.NAME)
                return branch, {"mode": "classifier", "route": branch.params.name,
                                "why": f"{label} matched (first match in order)"}
        return None, {"mode": "classifier", "route": NO_MATCH, "why": "no classifier matched"}

    def _execute(self, run: RunContext) -> None:
        with run.step("route") as entry:
            chosen, decision = self._choose(run)
            entry.update(decision)
            entry["branch"] = chosen.params.name if chosen is not None else NO_MATCH
        strategy = chosen.strategy if chosen is not None else self.no_match
        run.state["retrieval_decision"] = entry["branch"]
        if strategy is None:
            from .synthesizer import detect_language

            run.state["response"] = NO_MATCH_ANSWER[detect_language(run.state["question"])]
            run.emit({"type": "generation.delta", "text": run.state["response"]})
            return
        with run.step("branch", branch=entry["branch"], strategy=strategy.NAME) as branch_entry:
            strategy.documents = self.documents
            nested = RunContext(strategy, run.state["question"], run.state["top_k"], run.state["history"])
            nested.events, nested.cancelled, nested.recorder = run.events, run.cancelled, run.recorder
            strategy._execute(nested)
            branch_entry["trace"] = nested.state["trace"]
        for key in ("chunks", "filtered_chunks", "chunks_sent", "response", "citations"):
            run.state[key] = nested.state[key]
