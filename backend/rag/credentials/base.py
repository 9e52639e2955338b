"""What every credential component shares: secret parameters, the split into public and secret
values, and the masked form a user is shown instead of the secret."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, SecretStr

from rag.clients.outbound import OutboundPolicy, origin
from rag.core import ConfigObject, CredentialError, ParamsT
from rag.core.i18n import gettext_noop

MASK = "••••"
# Below this length, even the three-plus-four characters of a mask would give away too much.
MIN_LENGTH_TO_REVEAL = 16


def _not_blank(value: SecretStr) -> SecretStr:
    stripped = value.get_secret_value().strip()
    if not stripped:
        raise ValueError("must not be empty")
    return SecretStr(stripped) if stripped != value.get_secret_value() else value


Secret = Annotated[SecretStr, AfterValidator(_not_blank)]
"""A secret parameter: write-only in the schema, never serialised, surrounding blanks removed."""


def mask_secret(secret: str) -> str:
    """``"sk-…a1b2"``: the first three characters, an ellipsis and the last four; ``"••••"`` for a
    secret shorter than 16 characters.

    Examples
    --------
    >>> mask_secret("sk-proj-0123456789abcdefa1b2")
    'sk-…a1b2'
    >>> mask_secret("hunter2")
    '••••'
    """
    if len(secret) < MIN_LENGTH_TO_REVEAL:
        return MASK
    return f"{secret[:3]}…{secret[-4:]}"


class CredentialDestinationError(CredentialError):
    """A component would send a credential to a server it is not bound to."""

    code = "credential_destination"
    template = gettext_noop("the credential {name!r} may be sent only to {allowed}, not to {destination}")

    def __init__(self, name: str, allowed: list[str], destination: str) -> None:
        self.context = {"name": name, "allowed": ", ".join(allowed) or gettext_noop("no server"),
                        "destination": destination}
        super().__init__(self.template.format(**self.context))


class CredentialOutboundError(CredentialError):
    """A credential would be sent to an address its user's pipelines may not reach."""

    code = "outbound_address"
    template = gettext_noop("the credential {name!r} cannot be sent to {destination}: it is not a public address; "
                            "only an administrator can let pipelines reach it (TRELLIS_OUTBOUND_ALLOW)")

    def __init__(self, name: str, destination: str) -> None:
        self.context = {"name": name, "destination": destination}
        super().__init__(self.template.format(**self.context))


class CredentialComponent(ConfigObject[ParamsT]):
    """Base of the credential components (kind ``credential``): a secret and the public settings
    that go with it, such as a base URL.

    A credential is stored by the credentials app, encrypted, and handed to a pipeline at run
    time through ``ConfigObject.get_credential``; it never appears in pipeline JSON, traces or
    API responses. Subclasses list their ``Secret`` parameters in ``SECRET_PARAMS``; the first is
    the one ``mask()`` shows.
    """

    KIND = "credential"
    CATEGORY = "credentials"
    SECRET_PARAMS: ClassVar[tuple[str, ...]] = ()
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = set(cls.SECRET_PARAMS)
        secret_fields = {name for name, info in cls.Params.model_fields.items() if info.annotation is SecretStr}
        if declared != secret_fields:
            expected, given = ", ".join(sorted(secret_fields)) or "none", ", ".join(sorted(declared)) or "none"
            raise TypeError(f"{cls.__name__}.SECRET_PARAMS must list exactly its SecretStr parameters "
                            f"({expected}), not {given}")

    _granted_destinations: tuple[str, ...] = ()
    _outbound: OutboundPolicy | None = None

    @classmethod
    def own_destinations(cls, public_params: Mapping[str, Any]) -> list[str]:
        """The servers the credential belongs to, by its own settings (its base URL, its
        provider's endpoint), as URLs; overridden by the kinds that have them."""
        return []

    @classmethod
    def destinations_of(cls, public_params: Mapping[str, Any], granted: Iterable[str] = ()) -> list[str]:
        """Every origin (``scheme://host:port``) a credential with these public settings may be
        sent to: its own servers and those an administrator granted it."""
        found = (origin(url) for url in (*cls.own_destinations(public_params), *granted))
        return list(dict.fromkeys(value for value in found if value))

    def grant_destinations(self, urls: Iterable[str]) -> None:
        """Let this credential also go to ``urls`` (an administrator's allowlist, kept by the
        credential store, never by the credential's own editable settings)."""
        self._granted_destinations = tuple(urls)

    def restrict_outbound(self, policy: OutboundPolicy | None) -> None:
        """Let this credential be sent only to addresses ``policy`` allows (the credential store
        sets it when the user resolving the credential is not an administrator)."""
        self._outbound = policy

    def destinations(self) -> list[str]:
        return self.destinations_of(self.public_values(), self._granted_destinations)

    def check_destination(self, name: str, url: str) -> None:
        """Raise ``CredentialDestinationError`` unless the credential called ``name`` may be
        sent to ``url``, and ``CredentialOutboundError`` when ``url`` is an address the outbound
        policy set by ``restrict_outbound`` refuses. Components call it before every use of a
        secret."""
        allowed = self.destinations()
        if origin(url) not in allowed:
            raise CredentialDestinationError(name, allowed, origin(url) or url)
        # Checked before anything is sent, so a refused address answers the same whether
        # something listens there or not.
        if self._outbound is not None and self._outbound.problem(url):
            raise CredentialOutboundError(name, origin(url) or url)

    def secret_values(self) -> dict[str, str]:
        """The secrets in plain text, for the credential store to encrypt. Handle with care."""
        return {name: getattr(self.params, name).get_secret_value() for name in self.SECRET_PARAMS}

    def public_values(self) -> dict[str, Any]:
        """Every parameter that is not a secret (exactly what ``to_config`` keeps)."""
        return self.to_config()["params"]

    def mask(self) -> str:
        """The first secret masked, e.g. ``"sk-…a1b2"``; what a user sees instead of it."""
        if not self.SECRET_PARAMS:
            return ""
        return mask_secret(getattr(self.params, self.SECRET_PARAMS[0]).get_secret_value())

