"""Small slot components with fixed behaviour, in a private registry, to drive every branch."""

from rag.core import Params, Registry, ml, param
from rag.documents.models import Chunk
from rag.retrievers import Hit
from rag.strategies.slots import (
    Classifier,
    Judgement,
    Outcome,
    QueryTransformer,
    RelevanceEvaluator,
    RelevanceFilter,
    Reranker,
    RouteDecision,
    Router,
    WebRetriever,
)

registry = Registry()
TEXTS = dict(DISPLAY_NAME=ml("T", "T", "T"), DESCRIPTION=ml("t", "t", "t"), ICON="x")


@registry.register
class JudgeByWord(RelevanceEvaluator):
    """Relevant when the chunk's text contains ``word``."""

    locals().update(TEXTS)

    class Params(Params):
        word: str = param("", title=ml("w"))

    def evaluate(self, question, hits):
        return [Judgement(hit.chunk.id, self.params.word in hit.chunk.text, "contains the word"
                          if self.params.word in hit.chunk.text else "lacks the word") for hit in hits], {"judge": "word"}


@registry.register
class FixedWeb(WebRetriever):
    locals().update(TEXTS)

    class Params(Params):
        pass

    def search(self, question, top_k=None):
        chunk = Chunk(-7, -1, 0, "From the web: trellis means lattice.", {"url": "https://example.org/t", "title": "Web"})
        return Outcome([Hit(chunk, 1.0)], {"provider": "fixed"})


@registry.register
class Variants(QueryTransformer):
    locals().update(TEXTS)

    class Params(Params):
        pass

    def transform(self, question):
        return [question, "mitochondria energy", "Rust ownership"], {"how": "fixed"}


@registry.register
class HasWord(Classifier):
    locals().update(TEXTS)

    class Params(Params):
        word: str = param("", title=ml("w"))

    def matches(self, question):
        return self.params.word in question.lower()


@registry.register
class FixedRouter(Router):
    locals().update(TEXTS)

    class Params(Params):
        answer: str = param("", title=ml("a"))

    def route(self, question, routes):
        return RouteDecision(self.params.answer, f"fixed to {self.params.answer}", {"routes": list(routes)})


@registry.register
class KeepWord(RelevanceFilter):
    """Keeps the hits whose text contains ``word``."""

    locals().update(TEXTS)

    class Params(Params):
        word: str = param("", title=ml("w"))

    def filter(self, question, hits):
        return Outcome([hit for hit in hits if self.params.word in hit.chunk.text], {"kept_by": "word"})


@registry.register
class Reverse(Reranker):
    """Reverses the hits."""

    locals().update(TEXTS)

    class Params(Params):
        pass

    def rerank(self, question, hits):
        return Outcome(list(reversed(hits)), {"how": "reversed"})


registry.freeze()
