"""Background tasks of the evaluation app (run by the thread pool or Celery workers)."""

import jobs

from . import services


@jobs.task(services.IMPORT_TASK)
def import_dataset(*, dataset_id: int, path: str, archive: bool, max_queries: int | None = None,
                   max_documents: int | None = None) -> None:
    services.dataset_upload_corpus(dataset_id=dataset_id, path=path, archive=archive, max_queries=max_queries,
                                   max_documents=max_documents)


@jobs.task(services.RUN_TASK)
def run_evaluation(*, evaluation_id: int) -> None:
    services.evaluation_run(evaluation_id=evaluation_id)
