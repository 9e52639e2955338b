from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = _("Evaluation")

    def ready(self) -> None:
        from common.permissions import owned

        from . import tasks  # noqa: F401  (registers the background task and the start-up recovery)
        from .models import Evaluation, EvaluationDataset

        owned("evaluation_id", lambda user, path: Evaluation.objects.filter(owner=user))
        owned("dataset_id", lambda user, path: EvaluationDataset.objects.filter(owner=user))
