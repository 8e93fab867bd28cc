"""Benchmark records (measured engine figures) and verification reports of quotes."""

from __future__ import annotations

from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from configurator.verification.outcome import (
    INTEGER_UNITS,
    UNITS,
    check_title,
    note_text,
    percent,
)
from configurator.verification.published import PUBLISHED_TTFT_SPEEDUP


def _in_language(texts: dict[str, str], language: str | None) -> str | None:
    """The entry of ``texts`` for ``language`` (``de-at`` falls back to ``de``), if any."""
    code = (language or translation.get_language() or "").lower()
    return texts.get(code) or texts.get(code.split("-")[0]) or None


class BenchmarkRecord(models.Model):
    """One measured engine start or benchmark run. Memory figures are per GPU, in GiB.

    ``content_hash`` is the SHA-256 of the imported file (or of the bundled case), so
    importing the same file twice yields one record.
    """

    class Kind(models.TextChoices):
        GROUND_TRUTH = "ground_truth", _("bundled ground-truth case")
        VLLM_LOG = "vllm_log", _("vLLM startup log")
        SGLANG_LOG = "sglang_log", _("SGLang startup log")
        VLLM_BENCH_JSON = "vllm_bench_json", _("vllm bench serve result")

    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    engine = models.CharField(_("engine"), max_length=20)
    engine_version = models.CharField(_("engine version"), max_length=80)
    model_id = models.CharField(_("model"), max_length=200, db_index=True)
    gpu_type = models.CharField(_("GPU type"), max_length=200)
    gpu_class = models.CharField(_("GPU class"), max_length=40, db_index=True)
    gpu_count = models.PositiveSmallIntegerField(_("GPU count"), default=1)
    gpu_total_memory_gib = models.FloatField(_("GPU total memory (GiB)"), null=True, blank=True)
    tensor_parallel_size = models.PositiveSmallIntegerField(_("TP"), default=1)
    pipeline_parallel_size = models.PositiveSmallIntegerField(_("PP"), default=1)
    data_parallel_size = models.PositiveSmallIntegerField(_("DP"), default=1)
    gpu_memory_utilization = models.FloatField(_("GPU memory utilization"), null=True, blank=True)
    mem_fraction_static = models.FloatField(_("SGLang mem_fraction_static"), null=True, blank=True)
    max_model_len = models.PositiveIntegerField(_("max model length"), null=True, blank=True)
    block_size = models.PositiveIntegerField(_("block size"), null=True, blank=True)
    kv_cache_dtype = models.CharField(_("KV dtype"), max_length=20, default="auto")
    quantization = models.CharField(_("quantization"), max_length=40, blank=True)
    dtype = models.CharField(_("dtype"), max_length=20, blank=True)
    max_num_batched_tokens = models.PositiveIntegerField(null=True, blank=True)

    weights_gib = models.FloatField(_("weights (GiB)"), null=True, blank=True)
    activation_peak_gib = models.FloatField(_("activation peak (GiB)"), null=True, blank=True)
    non_torch_gib = models.FloatField(_("non-torch (GiB)"), null=True, blank=True)
    cuda_graph_gib = models.FloatField(_("CUDA graphs (GiB)"), null=True, blank=True)
    kv_cache_gib = models.FloatField(_("KV cache (GiB)"), null=True, blank=True)
    kv_cache_tokens = models.PositiveBigIntegerField(_("KV cache (tokens)"), null=True, blank=True)
    num_gpu_blocks = models.PositiveBigIntegerField(_("GPU blocks"), null=True, blank=True)
    max_concurrency = models.FloatField(_("maximum concurrency"), null=True, blank=True)
    ttft_mean_ms = models.FloatField(_("mean TTFT (ms)"), null=True, blank=True)
    ttft_median_ms = models.FloatField(_("median TTFT (ms)"), null=True, blank=True)
    ttft_p99_ms = models.FloatField(_("p99 TTFT (ms)"), null=True, blank=True)
    output_throughput_tok_s = models.FloatField(
        _("output throughput (tokens/s)"), null=True, blank=True
    )
    request_throughput_req_s = models.FloatField(
        _("request throughput (requests/s)"), null=True, blank=True
    )

    case_id = models.CharField(_("case id"), max_length=40, blank=True)
    source = models.TextField(_("source"))
    notes = models.TextField(_("notes"), blank=True)
    extra = models.JSONField(_("other figures"), default=dict, blank=True)
    content_hash = models.CharField(_("content hash"), max_length=64, unique=True, editable=False)
    imported_at = models.DateTimeField(_("imported at"), auto_now_add=True)

    class Meta:
        ordering = ["model_id", "gpu_class", "-imported_at"]
        verbose_name = _("benchmark record")
        verbose_name_plural = _("benchmark records")

    def __str__(self) -> str:
        label = self.case_id or f"#{self.pk}"
        return f"{label} {self.engine} {self.engine_version} {self.model_id} on {self.gpu_type}"


class VerificationStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    VERIFIED = "verified", _("Verified")
    WITHIN_TOLERANCE = "within_tolerance", _("Within tolerance")
    DEVIATES = "deviates", _("Deviates")
    NO_COMPARABLE_DATA = "no_comparable_data", _("No comparable data")
    FAILED = "failed", _("Failed")


DONE_STATUSES = frozenset(
    {
        VerificationStatus.VERIFIED,
        VerificationStatus.WITHIN_TOLERANCE,
        VerificationStatus.DEVIATES,
        VerificationStatus.NO_COMPARABLE_DATA,
        VerificationStatus.FAILED,
    }
)


class VerificationReport(models.Model):
    """The verification of one quote (``quote.verification_report``); a re-run replaces
    its checks."""

    quote = models.OneToOneField(
        "quotes.Quote", on_delete=models.CASCADE, related_name="verification_report"
    )
    status = models.CharField(
        _("status"),
        max_length=20,
        choices=VerificationStatus.choices,
        default=VerificationStatus.PENDING,
    )
    summary = models.TextField(
        _("summary"), blank=True, help_text=_("In English; see the summaries by language.")
    )
    summaries = models.JSONField(
        _("summaries by language"),
        default=dict,
        blank=True,
        help_text=_("The summary worded in each site language, by language code."),
    )
    error = models.TextField(_("error"), blank=True)
    runs = models.PositiveIntegerField(_("runs"), default=0)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("verification report")
        verbose_name_plural = _("verification reports")

    def __str__(self) -> str:
        return f"{self.quote} {self.get_status_display()}"

    @property
    def is_done(self) -> bool:
        """Whether the job has finished (successfully or not)."""
        return self.status in DONE_STATUSES

    def summary_in(self, language: str | None = None) -> str:
        """The summary in ``language`` (the active language when ``None``).

        Falls back to :attr:`summary` for a report stored before summaries were kept
        per language, or for a language the job did not word it in.
        """
        return _in_language(self.summaries or {}, language) or self.summary

    @property
    def localized_summary(self) -> str:
        """The summary in the active language (for templates)."""
        return self.summary_in()


class VerificationCheck(models.Model):
    """One comparison of a predicted figure with a measured one."""

    report = models.ForeignKey(VerificationReport, on_delete=models.CASCADE, related_name="checks")
    position = models.PositiveSmallIntegerField(default=0)
    alternative = models.CharField(_("alternative"), max_length=120, blank=True)
    alternative_labels = models.JSONField(
        _("alternative by language"),
        default=dict,
        blank=True,
        help_text=_("The alternative's title in each site language, by language code."),
    )
    name = models.CharField(_("check"), max_length=200)
    quantity = models.CharField(_("quantity"), max_length=40)
    unit = models.CharField(_("unit"), max_length=20)
    predicted = models.FloatField(_("predicted"))
    measured = models.FloatField(_("measured"))
    deviation = models.FloatField(_("deviation"))
    tolerance = models.FloatField(_("tolerance"))
    status = models.CharField(_("status"), max_length=20, choices=VerificationStatus.choices)
    counted = models.BooleanField(
        _("counted"),
        default=True,
        help_text=_("Whether the check sets the overall status (else informational)."),
    )
    note = models.TextField(
        _("note"), blank=True, help_text=_("Why it is not counted, or its weaker basis.")
    )
    source = models.TextField(_("source"))
    record = models.ForeignKey(
        BenchmarkRecord, on_delete=models.SET_NULL, null=True, blank=True, related_name="checks"
    )

    class Meta:
        ordering = ["position", "pk"]
        verbose_name = _("verification check")
        verbose_name_plural = _("verification checks")

    def __str__(self) -> str:
        return f"{self.name}: {self.get_status_display()}"

    @property
    def deviation_percent(self) -> float:
        """The relative deviation in percent."""
        return self.deviation * 100

    repeats: tuple[VerificationCheck, ...] = ()
    """The same comparison stored for later alternatives of the quote
    (:func:`configurator.verification.outcome.once_per_quote`), set by the report page."""

    @property
    def alternative_display(self) -> str:
        """The alternative's title in the active language (as stored when not kept)."""
        return _in_language(self.alternative_labels or {}, None) or self.alternative

    @property
    def alternatives_display(self) -> str:
        """The titles of this check's alternative and of those that repeat it
        (:attr:`repeats`), in the active language."""
        return "; ".join(c.alternative_display for c in (self, *self.repeats))

    @property
    def published_range(self) -> tuple[float, float] | None:
        """The published range a check is compared with (the TTFT reduction from CPU
        hits, :data:`~configurator.verification.published.PUBLISHED_TTFT_SPEEDUP`), or
        ``None`` for a check against one measured figure."""
        return PUBLISHED_TTFT_SPEEDUP if self.quantity == "ttft_speedup" else None

    @property
    def title(self) -> str:
        """The check's name in the active language (the record's label kept as is)."""
        return check_title(self.name)

    @property
    def note_display(self) -> str:
        """The note in the active language."""
        return note_text(self.note) if self.note else ""

    @property
    def unit_display(self) -> str:
        """The unit in the active language (``tokens`` → ``Tokens`` in German)."""
        return str(UNITS.get(self.unit, self.unit))

    @property
    def whole_numbers(self) -> bool:
        """Whether the figures are counts (shown without decimals, grouped)."""
        return self.unit in INTEGER_UNITS

    @property
    def deviation_display(self) -> str:
        """The signed deviation in the active language (``+4,2 %``)."""
        return percent(self.deviation)
