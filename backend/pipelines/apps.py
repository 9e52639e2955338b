from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PipelinesConfig(AppConfig):
    name = "pipelines"
    verbose_name = _("Pipelines")

    def ready(self) -> None:
        from common.permissions import owned

        from .models import Pipeline

        owned("pipeline_id", lambda user, path: Pipeline.objects.filter(owner=user))
