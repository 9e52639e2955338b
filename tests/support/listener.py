"""A loopback TCP port that records who connects: the "internal service" an SSRF test aims at.

A test points a credential, a redirect or a name at it and asserts it was never reached::

    with Listener() as internal:
        ...  # something that must not connect to internal.port
    assert internal.connections == 0, internal.received

It accepts every connection, reads what arrives (for a second at most) and answers nothing.
"""

from __future__ import annotations

import socket
import threading


class Listener:
    """``127.0.0.1:<port>``, counting connections and keeping the bytes received."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.1)
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self.received = b""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"listener-{self.port}", daemon=True)

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except (TimeoutError, OSError):
                continue
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._read, args=(connection,), daemon=True).start()

    def _read(self, connection: socket.socket) -> None:
        connection.settimeout(1.0)
        with connection:
            try:
                while data := connection.recv(65536):
                    with self._lock:
                        self.received += data
            except OSError:
                pass


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
