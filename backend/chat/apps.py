from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = _("Chat")

    def ready(self) -> None:
        from django.conf import settings

        from common.permissions import owned
        from rag.llms.local import configure_local_servers
        from rag.tracing import RunLimits, configure_run_limits

        # The engine's limits on runs and on the local model's servers, from the settings.
        configure_run_limits(RunLimits.of(deadline_s=settings.TRELLIS_RUN_DEADLINE_S,
                                          max_llm_calls=settings.TRELLIS_RUN_MAX_LLM_CALLS))
        configure_local_servers(max_servers=settings.TRELLIS_LOCAL_LLM_MAX_SERVERS,
                                max_memory_mb=settings.TRELLIS_LOCAL_LLM_MAX_MEMORY_MB)

        from .models import Conversation

        owned("conversation_id", lambda user, path: Conversation.objects.filter(owner=user))
        from . import services  # noqa: F401  (registers the start-up recovery of interrupted answers)
