"""The agentic ensemble: an LLM plans searches over child retrievers and judges the pool they find.

``retriever`` is the component; ``verdicts`` what the LLM answers and which operations may run;
``pool`` how every operation's ranking becomes one pool; ``catalog`` how the children are shown.
"""

from .retriever import AgenticEnsembleRetriever
from .verdicts import VERDICT_SCHEMA, Evaluation, split_operations

__all__ = ["VERDICT_SCHEMA", "AgenticEnsembleRetriever", "Evaluation", "split_operations"]
