from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Accounts")

    def ready(self) -> None:
        from common.permissions import owned

        from . import services  # noqa: F401  (connects the sign-in throttling signals)
        from .selectors import api_token_list

        owned("api_token_id", lambda user, path: api_token_list(user=user))
