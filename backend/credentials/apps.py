from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _


class CredentialsConfig(AppConfig):
    name = "credentials"
    verbose_name = _("Credentials")

    def ready(self) -> None:
        from common.permissions import owned

        from .selectors import credential_list

        # Shared credentials are visible to everyone; changing them stays the owner's (the API checks).
        owned("credential_id", lambda user, path: credential_list(user=user))
        checks.register(check_credentials_key, checks.Tags.security)


def check_credentials_key(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """``manage.py check`` (and ``migrate``, ``runserver``) report a malformed credentials key."""
    from . import crypto

    try:
        crypto.check_keys()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="credentials.E001")]
    return []
