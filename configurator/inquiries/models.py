"""Inquiries: a customer's workload, the plan they saw, and how to reach them."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.workload import FIELDS as WORKLOAD_FIELDS
from sizing.workload import Workload, stored_inputs


class Inquiry(models.Model):
    """A request for a quote, sent from the public configurator.

    The inputs are stored as typed columns (presales filters and re-plans from them);
    ``plan_summary`` is the JSON snapshot of the plan summary (``docs/cli.md``) that the
    customer saw when they submitted, so later engine or catalog changes do not alter it.
    A private model keeps its uploaded ``config.json`` in ``private_config`` (and the
    weights the customer gave in ``private_weights_gib``); ``model`` is then its name.
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

    # The workload: one column per field of sizing.workload.Workload, of the same name.
    model = models.CharField(_("model"), max_length=200)
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
    active_share = models.FloatField(_("share of users active at once"), null=True, blank=True)
    shared_prompt_tokens = models.PositiveIntegerField(
        _("shared system prompt (tokens)"), default=0
    )
    kv_dtype = models.CharField(_("KV-cache dtype"), max_length=8)
    gpu = models.CharField(_("GPU"), max_length=64)
    gpus_per_node = models.PositiveSmallIntegerField(_("GPUs per node"))
    tensor_parallel_size = models.PositiveSmallIntegerField(
        _("tensor parallel size"), null=True, blank=True
    )
    expert_parallel = models.BooleanField(_("expert parallel"), default=False)
    max_host_memory_gb = models.PositiveIntegerField(
        _("most host memory per node (GB)"), null=True, blank=True
    )
    without_shared_tier = models.BooleanField(_("no shared tier"), default=False)
    without_nvme_tier = models.BooleanField(_("no NVMe tier"), default=False)
    without_cpu_tier = models.BooleanField(_("no CPU-memory tier"), default=False)
    serving_engine = models.CharField(_("serving engine"), max_length=32, blank=True)
    new_conversations_per_day = models.PositiveIntegerField(
        _("new conversations per day"), default=0
    )
    turns = models.PositiveIntegerField(_("turns per conversation"), default=8)
    gap_profile = models.CharField(_("time between turns"), max_length=16, default="chat")
    gap_median_s = models.FloatField(_("median time between turns (s)"), null=True, blank=True)
    gap_p90_s = models.FloatField(_("p90 time between turns (s)"), null=True, blank=True)
    new_prompt_tokens = models.PositiveIntegerField(
        _("new prompt tokens per turn"), null=True, blank=True
    )
    output_tokens = models.PositiveIntegerField(_("output tokens per turn"), null=True, blank=True)
    busy_hour_active_share = models.FloatField(_("share active in the busiest hour"), default=1.0)
    ttft_p95_ms = models.FloatField(_("TTFT p95 target (ms)"), default=2000.0)
    tpot_ms = models.FloatField(_("TPOT target (ms)"), default=200.0)
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
    def workload(self) -> Workload:
        """The stored inputs as the sizing engine's :class:`Workload`."""
        return Workload(**{name: getattr(self, name) for name in WORKLOAD_FIELDS})

    @property
    def inputs(self) -> dict[str, Any]:
        """The workload as stored inputs (:func:`sizing.workload.stored_inputs`): JSON-safe,
        so quotes can store them; a private model carries its stored ``config.json``."""
        return stored_inputs(
            self.workload,
            private_config=self.private_config,
            private_weights_gib=self.private_weights_gib,
        )

    @staticmethod
    def reference_for(*, year: int, pk: int) -> str:
        """The public reference ``INQ-<year>-<six-digit number>`` for a saved inquiry."""
        return f"INQ-{year}-{pk:06d}"
