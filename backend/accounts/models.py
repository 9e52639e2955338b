from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ApiToken(models.Model):
    """A user's key for the OpenAI-compatible API and the MCP server (``Authorization: Bearer``).

    Only the SHA-256 of the secret is kept: the secret is shown once, when the token is made.
    ``prefix`` (the secret's first characters) tells tokens apart in lists without revealing
    them. A revoked token is kept, so lists and the admin still say what it was and when it
    stopped working."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(_("name"), max_length=100)
    prefix = models.CharField(_("prefix"), max_length=16, help_text=_("The first characters of the token."))
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None
