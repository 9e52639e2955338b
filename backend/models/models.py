from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ModelInstall(models.Model):
    """One request to install a model, and where it stands. The installed model itself lives in
    the model store on disk (``rag.models_manager``), shared by every user."""

    class Source(models.TextChoices):
        HUB = "hub", _("Hugging Face Hub")
        ZIP = "zip", _("Uploaded .zip")
        FOLDER = "folder", _("Local folder")

    class Kind(models.TextChoices):
        EMBEDDING = "embedding", _("Embedding model")
        CROSS_ENCODER = "cross-encoder", _("Cross-encoder")

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        DOWNLOADING = "downloading", _("Downloading")
        EXTRACTING = "extracting", _("Extracting")
        CHECKING = "checking", _("Checking")
        READY = "ready", _("Installed")
        FAILED = "failed", _("Failed")
        REMOVED = "removed", _("Removed")

    ACTIVE = (Status.QUEUED, Status.DOWNLOADING, Status.EXTRACTING, Status.CHECKING)

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="model_installs", help_text=_("Empty for installs from the command line."))
    source = models.CharField(_("source"), max_length=16, choices=Source.choices)
    reference = models.CharField(_("from"), max_length=500,
                                 help_text=_("The hub model id, the uploaded file's name or the folder's path."))
    revision = models.CharField(_("revision"), max_length=100, blank=True,
                                help_text=_("Hub installs: the branch, tag or commit asked for, then the commit."))
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices)
    name = models.CharField(_("name"), max_length=100, db_index=True)
    copy = models.BooleanField(_("copy the folder"), default=False,
                               help_text=_("Folder installs: copy its files instead of using them in place."))
    archive = models.CharField(max_length=500, blank=True,
                               help_text=_("Zip installs: the upload, relative to the data directory, until installed."))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    bytes_done = models.PositiveBigIntegerField(default=0)
    bytes_total = models.PositiveBigIntegerField(default=0)
    size = models.PositiveBigIntegerField(_("size in bytes"), default=0)
    error = models.TextField(_("error"), blank=True, help_text=_("Why the install failed, in English."))
    error_code = models.CharField(max_length=32, blank=True)
    error_template = models.TextField(blank=True, help_text=_("The error's message template, for translation."))
    error_context = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("model install")
        verbose_name_plural = _("model installs")

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"
