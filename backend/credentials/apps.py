from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _


class CredentialsConfig(AppConfig):
    name = "credentials"
    verbose_name = _("Credentials")

    def ready(self) -> None:
        checks.register(check_credentials_key, checks.Tags.security)


def check_credentials_key(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """``manage.py check`` (and ``migrate``, ``runserver``) report a malformed credentials key."""
    from . import crypto

    try:
        crypto.check_keys()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="credentials.E001")]
    return []
