"""The cache of Hugging Face Hub lookups: one row per repo and requested revision."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _


class HubModelQuerySet(models.QuerySet["HubModel"]):
    """Lookups by the case-insensitive repo id."""

    def for_repo(self, repo_id: str) -> HubModelQuerySet:
        """Rows of ``repo_id`` (any revision), newest first."""
        return self.filter(repo_key=repo_id.lower()).order_by("-fetched_at")


class HubModel(models.Model):
    """What the Hub said about one revision of a model, kept so that a repeat lookup,
    an offline machine or a Hub outage still has an answer.

    ``repo_key`` is the id as asked for, in lower case (the Hub may spell it otherwise);
    ``revision`` is the revision as asked for (``""`` for the default branch); ``sha``
    is the commit it resolved to. A row is written only after the whole lookup
    succeeded and the sizing engine accepted the config.
    """

    repo_key = models.CharField(_("repo id (lower case)"), max_length=200, editable=False)
    repo_id = models.CharField(_("repo id"), max_length=200)
    revision = models.CharField(_("requested revision"), max_length=200, blank=True)
    sha = models.CharField(_("commit"), max_length=64)
    config = models.JSONField(_("config.json"))
    checkpoint_bytes = models.BigIntegerField(_("checkpoint bytes"), null=True, blank=True)
    checkpoint_source = models.CharField(_("checkpoint size source"), max_length=200, blank=True)
    total_params = models.BigIntegerField(_("parameters"), null=True, blank=True)
    gated = models.CharField(_("gated"), max_length=16, blank=True)
    license = models.CharField(_("license"), max_length=100, blank=True)
    pipeline_tag = models.CharField(_("pipeline tag"), max_length=64, blank=True)
    fetched_at = models.DateTimeField(_("fetched at"), auto_now_add=True)

    objects = HubModelQuerySet.as_manager()

    class Meta:
        verbose_name = _("cached Hub model")
        verbose_name_plural = _("cached Hub models")
        constraints = [
            models.UniqueConstraint(
                fields=["repo_key", "revision"], name="modelhub_one_row_per_revision"
            )
        ]
        ordering = ["repo_key", "revision"]

    def __str__(self) -> str:
        suffix = f"@{self.revision}" if self.revision else ""
        return f"{self.repo_id}{suffix} ({self.sha[:12]})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self.repo_key:
            self.repo_key = self.repo_id.lower()
        super().save(*args, **kwargs)
