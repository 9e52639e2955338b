"""ASGI entry point: HTTP through Django (``/mcp`` through the MCP server first), websockets
through Channels (authenticated; from the app's own origins only, ``common.origins``)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

# Imported after Django is set up: routing modules import models.
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from common.limits import RequestBodyLimit  # noqa: E402
from common.origins import SameOriginValidator  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402
from gateway.asgi import with_mcp  # noqa: E402
from jobs import recover_interrupted_work  # noqa: E402

if settings.TRELLIS_JOBS_BACKEND == "threads":
    # The embedded server runs the jobs itself: whatever a crash interrupted starts again here.
    recover_interrupted_work()

if settings.TRELLIS_WARM_LOCAL_LLM:
    import threading  # noqa: E402

    from rag.llms import ANSWER_MODEL, LocalLLM  # noqa: E402

    # The model that writes the default pipeline's answers, so the first question does not wait.
    threading.Thread(target=lambda: LocalLLM(model=ANSWER_MODEL).init_model(), name="trellis-warm-llm",
                     daemon=True).start()

application = ProtocolTypeRouter(
    {
        # Bodies past their limit are refused before Django reads (and spools) them; the MCP
        # server, which has its own limit, answers /mcp.
        "http": with_mcp(RequestBodyLimit(django_asgi_app)),
        # Handshakes from the app's own origins only (scheme, host and port), as Django's CSRF
        # check decides for REST: a page on another port of the same host is another site.
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
