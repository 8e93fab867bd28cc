"""Verification workflows: load and import benchmark records, verify a quote's plans.

Starting a verification publishes its job, so :func:`verification_start` lives beside
the job in :mod:`configurator.verification.tasks`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from configurator.planning.services import plan_stored
from configurator.quotes.models import Quote
from configurator.verification import comparison, published
from configurator.verification.comparison import CheckResult, ModelClass, shorten
from configurator.verification.models import (
    BenchmarkRecord,
    VerificationCheck,
    VerificationReport,
    VerificationStatus,
)
from configurator.verification.outcome import checks_outcome
from configurator.verification.records import (
    SETTINGS_FIELDS,
    bundled_cases,
    load_cases,
)
from configurator.verification.records import (
    record_import_file as record_import_file,  # the service callers use
)
from sizing.errors import SizingError
from sizing.memory import calibrated
from sizing.model.spec import catalog_entry, from_catalog
from sizing.plan.orchestrator import Plan

log = logging.getLogger(__name__)


def benchmarks_load_initial() -> int:
    """Load the bundled benchmark records; returns how many exist. Idempotent."""
    load_cases(bundled_cases())
    return BenchmarkRecord.objects.filter(kind=BenchmarkRecord.Kind.GROUND_TRUTH).count()


@lru_cache(maxsize=256)
def _spec(model_id: str) -> Any:
    """The offline catalog's spec for ``model_id``, or ``None`` (no Hub calls in a job)."""
    if catalog_entry(model_id) is None:
        return None
    try:
        return from_catalog(model_id)
    except ValueError:
        return None


@lru_cache(maxsize=256)
def _class_of(model_id: str) -> ModelClass | None:
    spec = _spec(model_id)
    return comparison.model_class(spec) if spec is not None else None


def _predict(record: BenchmarkRecord) -> Any:
    """The calibrated engine model's prediction for ``record``'s settings, or ``None``.

    Only the settings known before the engine started are read
    (``sizing.memory.calibrated.setup_from_case``); a record without them is not predicted.
    """
    spec = _spec(record.model_id)
    if spec is None:
        return None
    inputs = {name: getattr(record, name) for name in SETTINGS_FIELDS}
    inputs["quantization"] = record.quantization or None
    inputs["dtype"] = record.dtype or None
    inputs["expert_parallel"] = bool(record.extra.get("expert_parallel"))
    try:
        return calibrated.predict(spec, calibrated.setup_from_case(inputs))
    except (SizingError, ValueError, ArithmeticError) as exc:
        log.info("no prediction for %s: %s", record, exc)
        return None


def plan_checks(
    plan: Plan,
    *,
    records: Iterable[BenchmarkRecord] | None = None,
    alternative: str = "",
    predict: Callable[[BenchmarkRecord], Any] = _predict,
) -> list[CheckResult]:
    """Every check of one plan against the benchmark records.

    Args:
        plan: the sizing plan.
        records: candidates; all stored records with a KV pool when ``None``.
        alternative: the quote alternative's label, stored with each check.
        predict: the calibrated prediction for a record's settings.
    """
    pool = (
        list(records)
        if records is not None
        else list(BenchmarkRecord.objects.exclude(kv_cache_gib=None))
    )
    model_id = plan.request.model.repo_id
    gpu = comparison.gpu_class(plan.gpu.name)
    klass = comparison.model_class(plan.request.model)
    chosen = comparison.select_comparable(
        pool,
        model_id=model_id,
        klass=klass,
        gpu=gpu,
        class_of=_class_of,
    )
    width = comparison.kv_value_bytes(plan.request.workload.kv_dtype)
    checks: list[CheckResult] = []
    for record in chosen:
        prediction = predict(record)  # type: ignore[arg-type]  # chosen from pool
        if prediction is None:
            continue
        same_width = comparison.kv_value_bytes(record.kv_cache_dtype, record.dtype) == width
        # A record's tokens and concurrency verify only a plan that caches values of the
        # same width; its KV pool in GiB verifies any (the pool does not depend on it).
        checks += [
            check
            for check in comparison.prediction_checks(
                record, _spec(record.model_id), prediction, plan_model_id=model_id, klass=klass
            )
            if same_width or check.quantity not in comparison.WIDTH_DEPENDENT
        ]
    same_model = [r for r in pool if r.gpu_class == gpu]
    checks += comparison.budget_checks(
        plan_kv_gib_per_gpu=plan.parallelism.kv_cache_gib_per_gpu,
        plan_utilization=plan.request.rule.utilization,
        plan_tp=plan.parallelism.tensor_parallel_size,
        plan_weights_gib_per_gpu=plan.weights_gib / plan.parallelism.tensor_parallel_size,
        records=same_model,
        model_id=model_id,
    )
    hit_ms, miss_ms = plan.transfer.cpu_hit_ms, plan.transfer.miss_ms
    reload = (
        published.reload_check(reload_ms=hit_ms, recompute_ms=miss_ms, model_id=model_id, gpu=gpu)
        if hit_ms is not None and miss_ms is not None
        else None
    )
    if reload is not None:
        checks.append(reload)
    return [_label(c, alternative) for c in checks]


def _label(check: CheckResult, alternative: str) -> CheckResult:
    return replace(check, alternative=alternative)


def site_languages() -> list[str]:
    """The language codes of ``settings.LANGUAGES`` (the summary is stored in each)."""
    return [code for code, _name in settings.LANGUAGES]


def _quote_plans(quote: Quote) -> list[tuple[str, dict[str, str], Plan]]:
    """Each alternative's stored label, its title by site language and its plan."""
    plans = []
    for alt in quote.alternatives.all():
        titles = {language: alt.label_in(language) for language in site_languages()}
        plans.append((alt.label, titles, plan_stored(alt.inputs)))
    return plans


def verification_mark_running(*, quote_id: int) -> None:
    """Record that a worker picked up the job (creating the report if needed)."""
    if Quote.objects.filter(pk=quote_id).exists():
        VerificationReport.objects.update_or_create(
            quote_id=quote_id,
            defaults={"status": VerificationStatus.RUNNING, "started_at": timezone.now()},
        )


def verification_run(*, quote_id: int) -> VerificationReport:
    """Verify every alternative of quote ``quote_id`` and replace its report atomically.

    Computes all checks first, then in one transaction locks the report, deletes the
    old checks and writes the new ones with the overall status: a re-run or a
    redelivered job leaves exactly one report with one set of checks. The summary is
    worded in every site language (``summaries``; ``summary`` keeps the English one)
    and each check keeps its alternative's title by language, so the page shows the
    reader's language and the PDF the quote's, whatever language the job ran under.

    Raises:
        Quote.DoesNotExist: no such quote.
    """
    quote = Quote.objects.get(pk=quote_id)
    if not BenchmarkRecord.objects.filter(kind=BenchmarkRecord.Kind.GROUND_TRUTH).exists():
        benchmarks_load_initial()
    records = list(BenchmarkRecord.objects.exclude(kv_cache_gib=None))
    checks: list[CheckResult] = []
    plans = _quote_plans(quote)
    for label, _titles, plan in plans:
        checks += plan_checks(plan, records=records, alternative=label)
    titles = {label: names for label, names, _plan in plans}
    outcomes = {
        language: checks_outcome(
            checks,
            alternatives=[label for label, *_rest in plans],
            plan_models=[plan.request.model.repo_id for *_rest, plan in plans],
            alternative_names={label: names[language] for label, names in titles.items()},
            language=language,
        )
        for language in {*site_languages(), "en"}
    }
    outcome = outcomes["en"]
    with transaction.atomic():
        report, _ = VerificationReport.objects.select_for_update().get_or_create(quote=quote)
        report.checks.all().delete()
        VerificationCheck.objects.bulk_create(
            VerificationCheck(
                report=report,
                position=i,
                alternative=shorten(c.alternative, 120),
                alternative_labels={
                    language: shorten(name, 120)
                    for language, name in titles.get(c.alternative, {}).items()
                },
                name=shorten(c.name, 200),
                quantity=c.quantity,
                unit=c.unit,
                predicted=c.predicted,
                measured=c.measured,
                deviation=c.deviation,
                tolerance=c.tolerance,
                status=c.status,
                counted=c.counted,
                note=c.note,
                source=c.source,
                record=c.record if isinstance(c.record, BenchmarkRecord) else None,
            )
            for i, c in enumerate(checks)
        )
        report.status = outcome.status
        report.summary = outcome.summary
        report.summaries = {language: o.summary for language, o in outcomes.items()}
        report.error = ""
        report.runs += 1
        report.finished_at = timezone.now()
        report.save(
            update_fields=["status", "summary", "summaries", "error", "runs", "finished_at"]
        )
    return report


def verification_fail(*, quote_id: int, error: str) -> None:
    """Record that the job gave up (after its retries) with ``error``."""
    VerificationReport.objects.filter(quote_id=quote_id).update(
        status=VerificationStatus.FAILED, error=error[:2000], finished_at=timezone.now()
    )
