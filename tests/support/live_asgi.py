"""The served ASGI application (``config.asgi.application``) on a real loopback port, in a
thread of the test process, for clients that need a real HTTP server (the ``openai`` client,
the MCP SDK's HTTP client).

It shares the test's database and channel layer, so a test makes its data with the ORM and
then drives the server. uvicorn serves it, without the ASGI lifespan events, as daphne (which
``make run`` uses) sends none; daphne's Twisted reactor cannot be started again in one process,
which a server per test needs.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

START_TIMEOUT_S = 30


@contextmanager
def serving() -> Iterator[str]:
    """Serve the application until the block ends; yields its base URL."""
    import uvicorn

    from config.asgi import application

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(application, lifespan="off", log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, name="live-asgi", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the ASGI server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()
