"""Background tasks of the evaluation app (run by the thread pool or Celery workers)."""

from typing import Any

import jobs

from . import services


def _run_aborted(kwargs: dict[str, Any], error: BaseException) -> None:
    services.evaluation_aborted(evaluation_id=kwargs["evaluation_id"], error=error)


@jobs.task(services.IMPORT_TASK)
def import_dataset(*, dataset_id: int, path: str, archive: bool, max_queries: int | None = None,
                   max_documents: int | None = None) -> None:
    services.dataset_upload_corpus(dataset_id=dataset_id, path=path, archive=archive, max_queries=max_queries,
                                   max_documents=max_documents)


@jobs.task(services.RUN_TASK, subject=lambda kwargs: services.evaluation_subject(kwargs["evaluation_id"]),
           on_abort=_run_aborted)
def run_evaluation(*, evaluation_id: int) -> None:
    services.evaluation_run(evaluation_id=evaluation_id)
