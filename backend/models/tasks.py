"""Background tasks of the models app (run by the thread pool or Celery workers)."""

import jobs

from . import services


@jobs.task(services.INSTALL_TASK)
def install_model(*, install_id: int) -> None:
    services.model_install_run(install_id=install_id)
