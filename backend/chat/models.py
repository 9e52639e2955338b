from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from pipelines.models import Pipeline


class Conversation(models.Model):
    """A chat with one pipeline (which may be switched between questions)."""

    class Origin(models.TextChoices):
        WEB = "web", _("Chat page")
        API = "api", _("OpenAI-compatible API")
        MCP = "mcp", _("MCP tool")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    pipeline = models.ForeignKey(Pipeline, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="conversations")
    title = models.CharField(_("title"), max_length=200, blank=True)
    origin = models.CharField(_("origin"), max_length=8, choices=Origin.choices, default=Origin.WEB,
                              help_text=_("Where it was started: the chat page (or the REST API), "
                                          "/v1/chat/completions, or an MCP tool."))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"


class Message(models.Model):
    """A question or an answer. An answer is ``streaming`` until it is ``done``, ``failed`` or
    ``cancelled``; whatever text it had by then is kept."""

    class Role(models.TextChoices):
        USER = "user", _("User")
        ASSISTANT = "assistant", _("Assistant")

    class Status(models.TextChoices):
        STREAMING = "streaming", _("Streaming")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    text = models.TextField(blank=True)
    citations = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DONE)
    error = models.TextField(blank=True)
    pipeline = models.ForeignKey(Pipeline, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    timings = models.JSONField(default=dict, blank=True, help_text=_("first_token_ms, total_ms"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("message")
        verbose_name_plural = _("messages")

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:40]}"


class Trace(models.Model):
    """How one answer was found: the full trace, its agentic round summaries, the chunks the
    model was given."""

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="trace")
    trace = models.JSONField(default=dict)
    rounds = models.JSONField(default=list)
    chunks = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"Trace of message {self.message_id}"


class Run(models.Model):
    """The question a conversation is answering now: at most one per conversation, wherever the
    server process answering it runs. Its events so far are kept (``RunEvent``) so that any
    socket of the conversation, in any process, can replay them and then follow live; a cancel
    reaches the answering process on ``channel`` (the channel layer). Deleted once the answer
    is stored and its last event sent."""

    conversation = models.OneToOneField(Conversation, on_delete=models.CASCADE, related_name="run")
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="run")
    channel = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Run of message {self.message_id}"


class RunEvent(models.Model):
    """A batch of a run's events, numbered on from ``seq`` (the first one's number)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    events = models.JSONField(default=list)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="chat_runevent_unique_seq")]

    def __str__(self) -> str:
        return f"Events {self.seq}… of run {self.run_id}"
