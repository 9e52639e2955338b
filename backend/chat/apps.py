from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = _("Chat")

    def ready(self) -> None:
        from common.permissions import owned

        from .models import Conversation

        owned("conversation_id", lambda user, path: Conversation.objects.filter(owner=user))
        from . import services  # noqa: F401  (registers the start-up recovery of interrupted answers)
