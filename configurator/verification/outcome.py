"""The overall status and the summary sentence of a set of checks.

Pure Python (no Django): the page, the quote PDF (through the stored summary) and
``manage.py verify`` all read the same outcome, so their status, counts and largest
deviation agree.

Rules (``docs/verification.md``, "Overall status"):

- Only *counted* checks set the status, the number of checks, the number of engine starts
  and the largest deviation. Informational checks (``CheckResult.counted`` false, e.g.
  the published TTFT range measured on another model and GPU) are named apart with the
  reason they are not counted.
- The status is the worst counted check (``verified`` < ``within_tolerance`` <
  ``deviates``), or ``no_comparable_data`` without any counted check (issue 8).
- Alternatives of a quote without a counted check are named: a headline for the quote
  does not hide that one of its configurations has no comparable measurement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from configurator.verification.comparison import STATUS_ORDER, CheckResult

NO_COMPARABLE_DATA = "no_comparable_data"

QUANTITY_LABELS = {
    "kv_cache_gib": "KV pool per GPU",
    "kv_cache_tokens": "KV pool tokens",
    "max_concurrency": "maximum concurrency",
    "kv_budget_gib": "plan KV budget per GPU",
    "ttft_speedup": "reload vs. recompute",
}
STATUS_WORDS = {
    "verified": "verified",
    "within_tolerance": "within tolerance",
    "deviates": "deviate",
}


@dataclass(frozen=True)
class Outcome:
    """The overall status, the summary sentence and the checks split by whether they count."""

    status: str
    summary: str
    counted: tuple[CheckResult, ...]
    informational: tuple[CheckResult, ...]


def overall_status(checks: Sequence[CheckResult]) -> str:
    """The worst status of the counted checks, or ``no_comparable_data`` without any."""
    counted = [c for c in checks if c.counted]
    if not counted:
        return NO_COMPARABLE_DATA
    return max((c.status for c in counted), key=STATUS_ORDER.index)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _record_name(check: CheckResult) -> str:
    record = check.record
    if record is None:
        return ""
    return str(getattr(record, "case_id", "") or f"record {getattr(record, 'pk', '')}")


def _counted_sentence(counted: Sequence[CheckResult]) -> str:
    starts = {id(c.record) for c in counted if c.record is not None}
    by_status = ", ".join(
        f"{sum(c.status == s for c in counted)} {STATUS_WORDS[s]}"
        for s in STATUS_ORDER
        if any(c.status == s for c in counted)
    )
    worst = max(counted, key=lambda c: abs(c.deviation))
    where = ", ".join(
        part
        for part in (QUANTITY_LABELS.get(worst.quantity, worst.quantity), _record_name(worst))
        if part
    )
    return (
        f"{_plural(len(counted), 'check')} counted against "
        f"{_plural(len(starts), 'measured engine start')} ({by_status}); "
        f"largest deviation {worst.deviation_percent:+.1f} % ({where})."
    )


def _fallback_sentence(counted: Sequence[CheckResult], plan_models: Sequence[str]) -> str:
    plan = {m.lower() for m in plan_models}
    measured = {c.record.model_id for c in counted if c.record is not None}
    others = sorted(m for m in measured if m.lower() not in plan)
    if not others or not plan:
        return ""
    lead = "Measured only" if len(others) == len(measured) else "Partly measured"
    return (
        f"{lead} on another model of the same class ({', '.join(others)}): "
        "such checks are at best within tolerance."
    )


def _informational_sentence(informational: Sequence[CheckResult]) -> str:
    groups: dict[tuple[str, str], list[CheckResult]] = {}
    for check in informational:
        groups.setdefault((check.quantity, check.note), []).append(check)
    parts = []
    for (quantity, note), checks in groups.items():
        worst = max(checks, key=lambda c: abs(c.deviation))
        label = QUANTITY_LABELS.get(quantity, quantity)
        reason = note or "not comparable"
        parts.append(
            f"{_plural(len(checks), 'informational check')} of {label} "
            f"(largest deviation {worst.deviation_percent:+.1f} %), because {reason}"
        )
    return f"Not counted: {'; '.join(parts)}." if parts else ""


def checks_outcome(
    checks: Sequence[CheckResult],
    *,
    alternatives: Sequence[str] = (),
    plan_models: Sequence[str] = (),
) -> Outcome:
    """The overall status and summary of ``checks``.

    Args:
        checks: every check of a quote (all alternatives) or of one plan.
        alternatives: the labels of the quote's alternatives; those without a counted
            check are named in the summary.
        plan_models: the plans' model repository ids; counted checks against records of
            other models are named as class fallbacks.

    Returns:
        The :class:`Outcome`; its summary is one to four sentences in English.
    """
    counted = tuple(c for c in checks if c.counted)
    informational = tuple(c for c in checks if not c.counted)
    status = overall_status(checks)
    if status == NO_COMPARABLE_DATA:
        sentences = [
            "No benchmark data for this model class on this GPU class yet; "
            "the sizing rests on the planning rules alone."
        ]
    else:
        sentences = [_counted_sentence(counted), _fallback_sentence(counted, plan_models)]
        covered = {c.alternative for c in counted}
        missing = [label for label in alternatives if label not in covered]
        if missing:
            sentences.append(f"No comparable data for {'; '.join(missing)}.")
    sentences.append(_informational_sentence(informational))
    summary = " ".join(s for s in sentences if s)
    return Outcome(status=status, summary=summary, counted=counted, informational=informational)
