"""Encryption at rest of the credentials' secrets: Fernet (AES-128-CBC + HMAC-SHA256) through
``MultiFernet``, so a key can be rotated while tokens made with the previous one still open.

The key is ``settings.TRELLIS_CREDENTIALS_KEY`` (urlsafe base64 of 32 bytes); the keys it
replaced are ``settings.TRELLIS_CREDENTIALS_OLD_KEYS``. Keys are read from the settings on every
call, so a test's ``override_settings`` or a rotation takes effect at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from rag.core import CredentialError


class CredentialKeyError(CredentialError):
    """A stored secret cannot be decrypted with the configured keys."""


def generate_key() -> str:
    """A new random key, in the form ``TRELLIS_CREDENTIALS_KEY`` takes."""
    return Fernet.generate_key().decode("ascii")


def key_fingerprint(key: str) -> str:
    """Eight hex digits that identify a key without revealing it."""
    return hashlib.sha256(key.strip().encode("ascii", "replace")).hexdigest()[:8]


def _fernet(key: str, setting: str) -> Fernet:
    try:
        return Fernet(key.strip().encode("ascii"))
    except (ValueError, TypeError, UnicodeEncodeError):
        raise ImproperlyConfigured(
            f"{setting} is not a valid Fernet key: it must be 32 random bytes in urlsafe base64 "
            f"(44 characters ending in '='); generate one with "
            f"`python -c \"from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())\"`"
        ) from None


def _old_keys() -> list[str]:
    raw = getattr(settings, "TRELLIS_CREDENTIALS_OLD_KEYS", None) or []
    if isinstance(raw, str):
        raw = raw.split(",")
    return [key.strip() for key in raw if key and key.strip()]


def current_key() -> str:
    key = (getattr(settings, "TRELLIS_CREDENTIALS_KEY", None) or "").strip()
    if not key:
        raise ImproperlyConfigured(
            "TRELLIS_CREDENTIALS_KEY is not set: the credentials app cannot encrypt or decrypt secrets"
        )
    return key


def check_keys() -> None:
    """Raise ``ImproperlyConfigured`` naming the setting whose key is missing or malformed."""
    _fernet(current_key(), "TRELLIS_CREDENTIALS_KEY")
    for key in _old_keys():
        _fernet(key, "TRELLIS_CREDENTIALS_OLD_KEYS")


def _multi(keys: Iterable[tuple[str, str]]) -> MultiFernet:
    return MultiFernet([_fernet(key, setting) for key, setting in keys])


def _configured() -> MultiFernet:
    return _multi([(current_key(), "TRELLIS_CREDENTIALS_KEY")]
                  + [(key, "TRELLIS_CREDENTIALS_OLD_KEYS") for key in _old_keys()])


def encrypt_secrets(values: dict[str, str]) -> bytes:
    """The Fernet token (ASCII bytes) of ``values`` as JSON, made with the current key."""
    return _configured().encrypt(json.dumps(values, sort_keys=True).encode("utf-8"))


def decrypt_secrets(token: bytes | memoryview, *, name: str) -> dict[str, str]:
    """The secret values of the credential called ``name``.

    Raises
    ------
    CredentialKeyError
        When no configured key opens the token (the message names the credential, never a secret).
    """
    try:
        plain = _configured().decrypt(bytes(token))
    except InvalidToken:
        raise CredentialKeyError(
            f"the credentials key cannot decrypt credential {name!r}; was TRELLIS_CREDENTIALS_KEY rotated "
            f"without TRELLIS_CREDENTIALS_OLD_KEYS?"
        ) from None
    return json.loads(plain)


def reencrypt(token: bytes | memoryview, *, new_key: str, name: str) -> bytes:
    """``token`` opened with any configured key (or ``new_key``) and sealed again with ``new_key``."""
    keys = [(new_key, "--new-key"), (current_key(), "TRELLIS_CREDENTIALS_KEY")]
    keys += [(key, "TRELLIS_CREDENTIALS_OLD_KEYS") for key in _old_keys()]
    try:
        return _multi(keys).rotate(bytes(token))
    except InvalidToken:
        raise CredentialKeyError(
            f"the credentials key cannot decrypt credential {name!r}; was TRELLIS_CREDENTIALS_KEY rotated "
            f"without TRELLIS_CREDENTIALS_OLD_KEYS?"
        ) from None


def validate_key(key: str, *, setting: str) -> str:
    """``key`` stripped, or ``ImproperlyConfigured`` when it is not a Fernet key."""
    _fernet(key, setting)
    return key.strip()

