"""Background tasks of the models app (run by the thread pool or Celery workers)."""

from typing import Any

import jobs

from . import services


def _install_aborted(kwargs: dict[str, Any], error: BaseException) -> None:
    services.model_install_aborted(install_id=kwargs["install_id"], error=error)


@jobs.task(services.INSTALL_TASK, subject=lambda kwargs: services.install_subject(kwargs["install_id"]),
           on_abort=_install_aborted)
def install_model(*, install_id: int) -> None:
    services.model_install_run(install_id=install_id)
