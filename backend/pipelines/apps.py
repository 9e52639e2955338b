from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PipelinesConfig(AppConfig):
    name = "pipelines"
    verbose_name = _("Pipelines")
