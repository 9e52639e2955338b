"""The ground floor: what every app shares and nothing of any app.

API helpers and the one error shape (``api``, ``errors``), the ownership rule of paths and
sockets (``permissions``), translating engine messages (``i18n``), publishing realtime events
(``realtime``), request parsers, middleware and the OpenAPI post-processing. Every app may
import it; it imports no app. ``config/`` above it only wires settings, URLs and the servers.
"""
