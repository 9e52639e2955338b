"""A retriever that returns hits chosen by the test, over an in-memory set of documents."""

from rag.core import Registry, ml, param
from rag.documents.models import Chunk
from rag.retrievers import BaseRetriever, Hit, RetrieverParams

registry = Registry()


def make_documents(*sizes: int) -> dict[int, dict[int, Chunk]]:
    """Documents 1, 2, ... with the given chunk counts; chunk ids are document * 100 + position."""
    return {
        document: {
            position: Chunk(id=document * 100 + position, document_id=document, position=position,
                            text=f"d{document}p{position}")
            for position in range(size)
        }
        for document, size in enumerate(sizes, start=1)
    }


@registry.register
class FixedRetriever(BaseRetriever):
    CATEGORY = "test"
    ICON = "list"
    DISPLAY_NAME = ml("Fixed", "Fijo", "固定")
    DESCRIPTION = ml("Returns the hits it was given.", "Devuelve los resultados dados.", "傳回給定的結果。")

    class Params(RetrieverParams):
        top_k: int = param(10, title=ml("Top k"), ge=1)

    def __init__(self, **params):
        super().__init__(**params)
        self.planned: list[tuple[int, int]] = []
        self.planned_for: dict[str, list[tuple[int, int]]] = {}

    def plan(self, *positions: tuple[int, int]) -> "FixedRetriever":
        """Hits to return, best first, as (document, position)."""
        self.planned = list(positions)
        return self

    def plan_for(self, query: str, *positions: tuple[int, int]) -> "FixedRetriever":
        """Hits to return for ``query`` alone; other queries get ``plan``'s."""
        self.planned_for[query] = list(positions)
        return self

    def _search(self, query, top_k, node):
        planned = self.planned_for.get(query, self.planned)
        hits = [Hit(self.chunks[document][position], score=1.0 / rank)
                for rank, (document, position) in enumerate(planned, start=1)]
        return hits[:top_k]


registry.freeze()
