"""Credential components: API keys and tokens a pipeline resolves by name at run time through
``ConfigObject.get_credential``. The credentials app stores them encrypted."""

from .base import MASK, CredentialComponent, Secret, mask_secret
from .keys import BearerToken, OpenAIAPIKey, WebSearchAPIKey

__all__ = [
    "MASK",
    "BearerToken",
    "CredentialComponent",
    "OpenAIAPIKey",
    "Secret",
    "WebSearchAPIKey",
    "mask_secret",
]
