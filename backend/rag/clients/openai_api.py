"""What every component talking to an OpenAI-compatible server shares: the API key from a
stored credential, the client, and readable errors that never carry the key."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rag.core import ConfigObject, CredentialError, TrellisError

NO_KEY = "not-needed"


def resolve_api_key(component: ConfigObject, credential: str | None) -> str:
    """The API key of the credential named ``credential`` (None: a local server, no key)."""
    if credential is None:
        return NO_KEY
    secret = getattr(component.get_credential(credential).params, "api_key", None)
    if secret is None:
        raise CredentialError(f"the credential {credential!r} has no api_key")
    key = secret.get_secret_value() if hasattr(secret, "get_secret_value") else str(secret)
    if not key:
        raise CredentialError(f"the credential {credential!r} has an empty api_key")
    return key


def make_client(*, base_url: str, api_key: str, timeout: float, max_retries: int = 2) -> Any:
    from openai import OpenAI

    return OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries)


def scrub(text: str, api_key: str) -> str:
    """``text`` with the API key removed, in case a server echoes it."""
    if api_key and api_key != NO_KEY:
        text = text.replace(api_key, "***")
    return text


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
        raised = error(f"{where} answered HTTP {exc.status_code}: {server_message(exc, api_key)}")
        raised.status = exc.status_code  # type: ignore[attr-defined]
        raise raised from None
    except openai.APITimeoutError:
        raise error(f"{where} did not answer within {timeout:g} s") from None
    except openai.APIConnectionError as exc:
        raise error(f"could not reach {where}: {scrub(str(exc.__cause__ or exc), api_key)}") from None
    except openai.OpenAIError as exc:
        raise error(f"{where} gave an unusable answer: {scrub(str(exc), api_key)}") from None
