"""Inquiries: a customer's workload, the plan they saw, and how to reach them."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _


class Inquiry(models.Model):
    """A request for a quote, sent from the public configurator.

    The inputs are stored as typed columns (presales filters and re-plans from them);
    ``plan_summary`` is the JSON snapshot of :meth:`sizing.plan.Plan.summary` that the
    customer saw when they submitted, so later engine or catalog changes do not alter it.
    A private model keeps its uploaded ``config.json`` in ``private_config`` (and the
    weights the customer gave in ``private_weights_gib``); ``model_id`` is then its name.
    """

    class Status(models.TextChoices):
        NEW = "new", _("New")
        IN_PROGRESS = "in_progress", _("In progress")
        QUOTED = "quoted", _("Quoted")
        WON = "won", _("Won")
        LOST = "lost", _("Lost")

    reference = models.CharField(
        _("reference"), max_length=20, unique=True, null=True, blank=True, editable=False
    )
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.NEW, db_index=True
    )
    received_at = models.DateTimeField(_("received at"), auto_now_add=True, db_index=True)

    # The workload.
    model_id = models.CharField(_("model"), max_length=200)
    private_config = models.JSONField(
        _("uploaded config.json"),
        null=True,
        blank=True,
        help_text=_("Set for a private model the Hub does not have; sizes it again."),
    )
    private_weights_gib = models.FloatField(
        _("weights of the private model (GiB)"), null=True, blank=True
    )
    context_tokens = models.PositiveIntegerField(_("context per conversation (tokens)"))
    users = models.PositiveIntegerField(_("users"))
    active_share_percent = models.PositiveSmallIntegerField(
        _("users active at once (%)"), null=True, blank=True
    )
    system_prompt_tokens = models.PositiveIntegerField(
        _("shared system prompt (tokens)"), default=0
    )
    kv_dtype = models.CharField(_("KV-cache dtype"), max_length=8)
    gpu_slug = models.CharField(_("GPU"), max_length=64)
    gpus_per_node = models.PositiveSmallIntegerField(_("GPUs per node"))
    serving_engine = models.CharField(_("serving engine"), max_length=32, blank=True)
    new_conversations_per_day = models.PositiveIntegerField(
        _("new conversations per day"), default=0
    )
    plan_summary = models.JSONField(_("plan snapshot"), default=dict)

    # The contact.
    name = models.CharField(_("name"), max_length=200)
    company = models.CharField(_("company"), max_length=200)
    email = models.EmailField(_("email"))
    phone = models.CharField(_("phone"), max_length=40, blank=True)
    message = models.TextField(_("message"), max_length=5000, blank=True)
    consent = models.BooleanField(_("consent to processing"), default=False)
    language = models.CharField(_("language"), max_length=8, default="de")

    # Mail: set once each mail was handed to the mail server; the last failure, if any.
    presales_mailed_at = models.DateTimeField(_("presales mailed at"), null=True, blank=True)
    customer_mailed_at = models.DateTimeField(_("customer mailed at"), null=True, blank=True)
    mail_error = models.CharField(_("last mail error"), max_length=500, blank=True)

    # Set while an identical resubmission should show this inquiry instead of a new one.
    dedup_key = models.CharField(
        _("duplicate key"), max_length=64, unique=True, null=True, blank=True, editable=False
    )

    class Meta:
        ordering = ["-received_at"]
        verbose_name = _("inquiry")
        verbose_name_plural = _("inquiries")

    def __str__(self) -> str:
        return f"{self.reference or '(unsaved)'} {self.company}"

    @property
    def inputs(self) -> dict[str, Any]:
        """The workload as keyword arguments of ``planning.services.plan_create``.

        JSON-safe, so quotes can store them: a private model carries its stored
        ``config.json`` (``private_config``, ``private_weights_gib``), which ``plan_create``
        sizes by the same rules as the upload; a Hub model is resolved by ``model_id``.
        """
        inputs: dict[str, Any] = {
            "model_id": self.model_id,
            "context_tokens": self.context_tokens,
            "users": self.users,
            "gpu_slug": self.gpu_slug,
            "gpus_per_node": self.gpus_per_node,
            "kv_dtype": self.kv_dtype,
            "new_conversations_per_day": self.new_conversations_per_day,
            "active_share": (
                None if self.active_share_percent is None else self.active_share_percent / 100
            ),
            "shared_prompt_tokens": self.system_prompt_tokens,
        }
        if self.private_config is not None:
            inputs["private_config"] = self.private_config
            inputs["private_weights_gib"] = self.private_weights_gib
        return inputs

    @property
    def plan_snapshot(self) -> dict[str, Any]:
        """The plan summary the customer saw (same as ``plan_summary``)."""
        return dict(self.plan_summary)

    @staticmethod
    def reference_for(*, year: int, pk: int) -> str:
        """The public reference ``INQ-<year>-<six-digit number>`` for a saved inquiry."""
        return f"INQ-{year}-{pk:06d}"
