"""Writes of the accounts app: sign-in throttling (``sign_in``) and API tokens (``tokens``)."""

from .sign_in import (
    Lockout,
    client_address,
    login_failure_record,
    login_lockout,
    login_success_record,
    username_normalized,
)
from .tokens import (
    TOKEN_PREFIX,
    IssuedToken,
    TooManyTokens,
    api_token_authenticate,
    api_token_create,
    api_token_revoke,
    api_token_throttle,
)

__all__ = [
    "TOKEN_PREFIX", "IssuedToken", "Lockout", "TooManyTokens", "api_token_authenticate", "api_token_create", "api_token_revoke",
    "api_token_throttle", "client_address", "login_failure_record", "login_lockout", "login_success_record",
    "username_normalized",
]
