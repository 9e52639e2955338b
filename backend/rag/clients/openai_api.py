"""What every component talking to an OpenAI-compatible server shares: the API key from a
stored credential, the client, and readable errors that never carry the key."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rag.core import ConfigObject, CredentialError, TrellisError

from .outbound import REFUSED, OutboundPolicy

NO_KEY = "not-needed"
logger = logging.getLogger(__name__)


def resolve_api_key(component: ConfigObject, credential: str | None, *, url: str) -> str:
    """The API key of the credential named ``credential`` (None: a local server, no key), once
    the credential is known to be bound to ``url``, the server the key is about to be sent to."""
    if credential is None:
        return NO_KEY
    stored = component.get_credential(credential)
    check = getattr(stored, "check_destination", None)
    if check is None:
        raise CredentialError(f"{credential!r} is not a credential that can be sent to a server")
    check(credential, url)
    secret = getattr(stored.params, "api_key", None)
    if secret is None:
        raise CredentialError(f"the credential {credential!r} has no api_key")
    key = secret.get_secret_value() if hasattr(secret, "get_secret_value") else str(secret)
    if not key:
        raise CredentialError(f"the credential {credential!r} has an empty api_key")
    return key


def make_client(*, base_url: str, api_key: str, timeout: float, max_retries: int = 2,
                outbound: OutboundPolicy | None = None) -> Any:
    """The ``openai`` client for ``base_url``. It follows no redirect (a ``307`` would carry the
    prompt to wherever it points), and with ``outbound`` (the policy of a pipeline saved by a
    user who is not an administrator) it connects only to addresses the policy allows, each
    checked when its connection opens."""
    from openai import DEFAULT_CONNECTION_LIMITS, OpenAI

    from .guarded_http import guarded_client

    return OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries,
                  http_client=guarded_client(outbound, timeout=timeout, limits=DEFAULT_CONNECTION_LIMITS))


def scrub(text: str, api_key: str) -> str:
    """``text`` with the API key removed, in case a server echoes it."""
    if api_key and api_key != NO_KEY:
        text = text.replace(api_key, "***")
    return text


_IDENTIFIER = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def server_summary(body: Any) -> str:
    """`` (code, type)`` from an error body in OpenAI's shape when they are short identifiers
    (``invalid_api_key``, ``model_not_found``), else nothing. The server's free text is never
    passed on: a server a pipeline points at could echo anything back through it."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ""
    labels = [str(error[key]) for key in ("code", "type")
              if isinstance(error.get(key), (str, int)) and _IDENTIFIER.match(str(error[key]))]
    return f" ({', '.join(dict.fromkeys(labels))})" if labels else ""


def server_message(exc: Any, api_key: str) -> str:
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
    if not message:
        response = getattr(exc, "response", None)
        text = response.text if response is not None else ""
        message = text.strip()[:500] or "no message"
    return scrub(str(message), api_key)


@contextmanager
def readable_errors(where: str, *, api_key: str, timeout: float, error: type[TrellisError]) -> Iterator[None]:
    """Turn the ``openai`` client's exceptions into ``error`` with a sentence naming ``where``.

    The original exception is not chained: its repr may hold the request with the key.
    """
    import openai

    try:
        yield
    except openai.APIStatusError as exc:
        logger.warning("%s answered HTTP %s: %s", where, exc.status_code, server_message(exc, api_key))
        raised = error(f"{where} answered HTTP {exc.status_code}{server_summary(getattr(exc, 'body', None))}")
        raised.status = exc.status_code  # type: ignore[attr-defined]  # rides on whichever TrellisError subclass is given
        raise raised from None
    except openai.APITimeoutError:
        raise error(f"{where} did not answer within {timeout:g} s") from None
    except openai.APIConnectionError as exc:
        from .guarded_http import refused

        if refused(exc):
            raise error(f"{where} {REFUSED}") from None
        raise error(f"could not reach {where}: {scrub(str(exc.__cause__ or exc), api_key)}") from None
    except openai.OpenAIError as exc:
        raise error(f"{where} gave an unusable answer: {scrub(str(exc), api_key)}") from None
