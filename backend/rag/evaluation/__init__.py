"""Measuring pipelines on evaluation datasets: BEIR loading, retrieval and answer metrics,
bootstrap intervals, paired significance tests, and the report.

>>> from rag.evaluation import PipelineSpec, evaluate, load_beir, strategy_config
>>> dataset = load_beir("../shared/datasets/scifact")
>>> result = evaluate(dataset, [PipelineSpec("keyword", strategy_config("keyword"))], limit=50)
>>> result["pipelines"][0]["metrics"]["ndcg@10"]
"""

from .answers import (
    answer_contains,
    answer_tokens,
    citation_precision,
    exact_match,
    judge_faithfulness,
    normalize_answer,
    strip_citations,
    token_f1,
)
from .corpus import EvaluationCorpus, MemoryStores, MemoryVectorCollection, build_corpus
from .datasets import (
    CorpusDocument,
    DatasetError,
    EvaluationDataset,
    Query,
    assemble,
    available_datasets,
    dataset_path,
    detect_language,
    load_beir,
    load_beir_archive,
    readme_title,
    write_beir,
)
from .metrics import (
    RECALL_CURVE_KS,
    RETRIEVAL_METRICS,
    average_precision,
    document_ranking,
    mrr_at,
    ndcg_at,
    query_metrics,
    recall_at,
)
from .report import REPORT_FILES, answers_table, comparison_table, markdown_report, metrics_table, write_report
from .runner import (
    ANSWER_METRICS,
    PipelineSpec,
    RunOptions,
    clean,
    compare,
    default_embedding,
    evaluate,
    evaluate_pipeline,
    flat_summary,
    strategy_config,
)
from .statistics import bootstrap_ci, compare_paired, paired_bootstrap_test, paired_randomization_test, percentile

__all__ = [
    "ANSWER_METRICS",
    "RECALL_CURVE_KS",
    "REPORT_FILES",
    "RETRIEVAL_METRICS",
    "CorpusDocument",
    "DatasetError",
    "EvaluationCorpus",
    "EvaluationDataset",
    "MemoryStores",
    "MemoryVectorCollection",
    "PipelineSpec",
    "Query",
    "RunOptions",
    "answer_contains",
    "answers_table",
    "answer_tokens",
    "assemble",
    "available_datasets",
    "average_precision",
    "bootstrap_ci",
    "build_corpus",
    "citation_precision",
    "clean",
    "compare",
    "compare_paired",
    "comparison_table",
    "dataset_path",
    "default_embedding",
    "detect_language",
    "document_ranking",
    "evaluate",
    "evaluate_pipeline",
    "exact_match",
    "flat_summary",
    "judge_faithfulness",
    "load_beir",
    "load_beir_archive",
    "markdown_report",
    "metrics_table",
    "mrr_at",
    "ndcg_at",
    "normalize_answer",
    "paired_bootstrap_test",
    "paired_randomization_test",
    "percentile",
    "query_metrics",
    "readme_title",
    "recall_at",
    "strategy_config",
    "strip_citations",
    "token_f1",
    "write_beir",
]
