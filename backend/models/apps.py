from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ModelsConfig(AppConfig):
    name = "models"
    label = "models"
    verbose_name = _("Models")

    def ready(self) -> None:
        from django.conf import settings

        from common.permissions import owned
        from rag.models_manager import configure

        from . import tasks  # noqa: F401  (registers the background task and the start-up recovery)
        from .models import ModelInstall

        configure(settings.TRELLIS_MODELS_DIR / "installed", offline=settings.TRELLIS_OFFLINE,
                  max_bytes=settings.TRELLIS_MAX_MODEL_BYTES)
        owned("install_id", lambda user, path: ModelInstall.objects.filter(owner=user))
