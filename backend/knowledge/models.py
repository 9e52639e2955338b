from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class KnowledgeBase(models.Model):
    """A user's collection of documents, chunked one way and embedded with one default model."""

    class Language(models.TextChoices):
        ENGLISH = "en", _("English")
        SPANISH = "es", _("Spanish")
        CHINESE = "zh-Hant", _("Traditional Chinese")
        MULTILINGUAL = "multilingual", _("Several languages")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="knowledge_bases")
    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    translations = models.JSONField(
        _("texts in every language"), default=dict, blank=True,
        help_text=_('Names Trellis wrote itself, by field and language ({"name": {"en": …, "es": …}}); '
                    "the API shows the reader's language until a user edits the field."),
    )
    language = models.CharField(_("language"), max_length=16, choices=Language.choices, default=Language.ENGLISH)
    chunker = models.JSONField(_("chunker"), help_text=_("A chunker component reference."))
    embedding_model = models.JSONField(_("embedding model"), help_text=_("An embedding component reference."))
    evaluation_only = models.BooleanField(
        _("kept under Evaluation"), default=False,
        help_text=_("The corpus of an evaluation dataset, left out of the knowledge base list, the pipeline "
                    "editor's choice and the MCP tools until the user promotes it to an ordinary knowledge base."),
    )
    content_version = models.PositiveIntegerField(
        default=0, help_text=_("Moves whenever the set of ready chunks changes; indices built at an older version are stale.")
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="unique_knowledge_base_name_per_owner")]
        verbose_name = _("knowledge base")
        verbose_name_plural = _("knowledge bases")

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    """An uploaded file and where it stands in ingestion."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        PARSING = "parsing", _("Parsing")
        CHUNKING = "chunking", _("Chunking")
        EMBEDDING = "embedding", _("Embedding")
        INDEXING = "indexing", _("Indexing")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    IN_PROGRESS = (Status.QUEUED, Status.PARSING, Status.CHUNKING, Status.EMBEDDING, Status.INDEXING)

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="documents")
    knowledge_base = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="documents")
    name = models.CharField(_("name"), max_length=255)
    mime = models.CharField(_("media type"), max_length=100, blank=True)
    size = models.PositiveBigIntegerField(_("size in bytes"))
    sha256 = models.CharField(_("SHA-256"), max_length=64, db_index=True)
    file = models.CharField(_("stored file"), max_length=500, help_text=_("Path relative to the data directory."))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(_("error"), blank=True, help_text=_("Why ingestion failed, in English."))
    error_code = models.CharField(max_length=32, blank=True)
    error_template = models.TextField(blank=True, help_text=_("The error's message template, for translation."))
    error_context = models.JSONField(default=dict, blank=True)
    chunk_count = models.PositiveIntegerField(_("chunks"), default=0)
    page_count = models.PositiveIntegerField(_("pages"), null=True, blank=True)
    character_count = models.PositiveBigIntegerField(_("characters"), default=0)
    metadata = models.JSONField(default=dict, blank=True)
    attempt = models.PositiveIntegerField(
        default=0, help_text=_("Ingestion attempt; a run that finds a newer attempt stops without writing.")
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["knowledge_base", "status"]), models.Index(fields=["knowledge_base", "sha256"])]
        verbose_name = _("document")
        verbose_name_plural = _("documents")

    def __str__(self) -> str:
        return self.name


class Chunk(models.Model):
    """A piece of a document's text; its id is the id every index stores."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    knowledge_base = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="chunks")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    position = models.PositiveIntegerField()
    text = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["document", "position"]
        constraints = [models.UniqueConstraint(fields=["document", "position"], name="unique_chunk_position")]
        verbose_name = _("chunk")
        verbose_name_plural = _("chunks")

    def __str__(self) -> str:
        return f"{self.document.name} #{self.position}"


class VectorIndex(models.Model):
    """A Chroma collection of a knowledge base: its chunks embedded by one model, searched with
    one metric. The knowledge base's own model has one from the start; a pipeline that asks for
    another model or metric adds one, built in the background."""

    class Status(models.TextChoices):
        BUILDING = "building", _("Building")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    knowledge_base = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="vector_indexes")
    model_key = models.CharField(_("model key"), max_length=100)
    metric = models.CharField(_("metric"), max_length=8, choices=[("cosine", "cosine"), ("l2", "l2"), ("ip", "ip")])
    embedding_model = models.JSONField(_("embedding model"), help_text=_("An embedding component reference."))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.BUILDING)
    error = models.TextField(_("error"), blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["knowledge_base", "model_key", "metric"]
        constraints = [
            models.UniqueConstraint(fields=["knowledge_base", "model_key", "metric"], name="unique_vector_index"),
        ]
        verbose_name = _("vector index")
        verbose_name_plural = _("vector indexes")

    def __str__(self) -> str:
        return f"{self.knowledge_base} · {self.model_key} · {self.metric}"
