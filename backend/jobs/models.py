from django.db import models
from django.utils.translation import gettext_lazy as _


class JobRun(models.Model):
    """A job's subject (``document:12``) whose run started and has not ended.

    Written before a task's work starts and deleted when the task returns or raises, so a row
    that outlives its process marks a run the process died in. ``started`` counts those runs:
    recovery fails a subject the process died in ``MAX_CRASHES`` times instead of re-queuing it
    (``jobs.crashes``), so one hostile file cannot crash the server at every start.
    """

    subject = models.CharField(_("subject"), max_length=200, unique=True)
    task = models.CharField(_("task"), max_length=100)
    started = models.PositiveIntegerField(_("runs started, not ended"), default=0)
    last_started_at = models.DateTimeField(_("last started"), auto_now=True)

    class Meta:
        verbose_name = _("unfinished job run")
        verbose_name_plural = _("unfinished job runs")

    def __str__(self) -> str:
        return f"{self.subject} ({self.started})"
