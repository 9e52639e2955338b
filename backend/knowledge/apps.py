from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = _("Knowledge bases")

    def ready(self) -> None:
        from common.permissions import owned

        from .models import Document, KnowledgeBase

        owned("knowledge_base_id", lambda user, path: KnowledgeBase.objects.filter(owner=user))
        owned("document_id", lambda user, path: Document.objects.filter(
            owner=user, **({"knowledge_base_id": path["knowledge_base_id"]} if "knowledge_base_id" in path else {})))
        from . import tasks  # noqa: F401  (registers the background tasks)
