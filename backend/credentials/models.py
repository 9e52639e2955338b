from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
name_validator = RegexValidator(
    NAME_PATTERN, _("Use letters, digits, '.', '_' and '-', starting with a letter or digit."), code="invalid_name"
)


class Credential(models.Model):
    """A stored credential component: its public params in clear, its secrets encrypted.

    ``kind`` names the credential component (``OpenAIAPIKey``); ``secret`` is the Fernet token of
    the JSON of its secret params (see ``credentials.crypto``); ``mask`` is what users see.
    A shared credential (owned by staff) can be resolved by the users and groups an
    administrator granted it to. Wherever it is used, a credential goes only to its own servers
    (its kind says which: its base URL, its provider's endpoint) and to ``destinations``, which
    only an administrator sets.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="credentials")
    shared = models.BooleanField(
        _("shared"), default=False,
        help_text=_("The pipelines of the users and groups granted below may use a shared credential."),
    )
    granted_users = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="granted_credentials", verbose_name=_("granted users"),
        help_text=_("Users whose pipelines may use this shared credential."),
    )
    granted_groups = models.ManyToManyField(
        "auth.Group", blank=True, related_name="granted_credentials", verbose_name=_("granted groups"),
        help_text=_("Groups whose members' pipelines may use this shared credential."),
    )
    destinations = models.JSONField(
        _("other servers"), default=list, blank=True,
        help_text=_("Servers besides its own (its base URL or provider) that this credential may be sent to, "
                    "e.g. https://gateway.example.org/v1. Only an administrator sets them."),
    )
    name = models.CharField(
        _("name"), max_length=100, validators=[name_validator],
        help_text=_("What pipelines refer to it by, e.g. openai-main."),
    )
    kind = models.CharField(_("kind"), max_length=64, help_text=_("The credential component, e.g. OpenAIAPIKey."))
    public_params = models.JSONField(_("public parameters"), default=dict, blank=True)
    secret = models.BinaryField(_("encrypted secret"))
    mask = models.CharField(_("mask"), max_length=32, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    rotated_at = models.DateTimeField(
        _("rotated"), null=True, blank=True, help_text=_("When its secret value was last replaced."),
    )
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = _("credential")
        verbose_name_plural = _("credentials")
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "name"], name="unique_credential_name_per_owner",
                violation_error_message=_("This owner already has a credential with this name."),
            ),
            models.UniqueConstraint(
                fields=["name"], condition=Q(shared=True), name="unique_shared_credential_name",
                violation_error_message=_("A shared credential with this name already exists."),
            ),
        ]

    def __str__(self) -> str:
        return self.name
