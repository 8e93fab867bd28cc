"""The overall status and the summary sentence of a set of checks.

No database access: the page, the quote PDF (through the stored summaries) and
``manage.py verify`` all read the same outcome, so their status, counts and largest
deviation agree. The summary is worded in one language per call (``language``); the
verification job stores it in every site language, so a German page and an English PDF
each read their own.

Rules (``docs/verification.md``, "Overall status"):

- Only *counted* checks set the status, the number of checks, the number of engine starts
  and the largest deviation. Informational checks (``CheckResult.counted`` false, e.g.
  the published TTFT range measured on another model and GPU) are named apart with the
  reason they are not counted.
- The status is the worst counted check (``verified`` < ``within_tolerance`` <
  ``deviates``), or ``no_comparable_data`` without any counted check (issue 8).
- Alternatives of a quote without a counted check are named: a headline for the quote
  does not hide that one of its configurations has no comparable measurement.
- A measurement is counted once per quote: alternatives that compare the same record the
  same way repeat one check (:func:`once_per_quote`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext, pgettext_lazy

from configurator.verification.comparison import (
    FALLBACK_NOTE_PATTERN,
    STATUS_ORDER,
    CheckResult,
)
from configurator.verification.published import (
    PUBLISHED_TTFT_IN_SAMPLE,
    PUBLISHED_TTFT_NOT_COUNTED,
)

NO_COMPARABLE_DATA = "no_comparable_data"

QUANTITY_LABELS = {
    "kv_cache_gib": gettext_lazy("KV pool per GPU"),
    "kv_cache_tokens": gettext_lazy("KV pool tokens"),
    "max_concurrency": gettext_lazy("maximum concurrency"),
    "kv_budget_gib": gettext_lazy("plan KV budget per GPU"),
    "ttft_speedup": gettext_lazy("reload vs. recompute"),
}
STATUS_WORDS = {
    "verified": gettext_lazy("verified"),
    "within_tolerance": gettext_lazy("within tolerance"),
    "deviates": gettext_lazy("deviate"),
}
CHECK_TITLES = {
    "KV pool per GPU": gettext_lazy("KV pool per GPU"),
    "KV pool tokens": gettext_lazy("KV pool tokens"),
    "Maximum concurrency": gettext_lazy("Maximum concurrency"),
    "Plan KV budget per GPU vs. measured": gettext_lazy("Plan KV budget per GPU vs. measured"),
    "Reload vs. recompute (TTFT reduction from CPU hits)": gettext_lazy(
        "Reload vs. recompute (TTFT reduction from CPU hits)"
    ),
}
"""The English titles of :mod:`comparison`'s and :mod:`published`'s check names."""
UNITS = {
    "tokens": pgettext_lazy("unit", "tokens"),
    "requests": pgettext_lazy("unit", "requests"),
}
INTEGER_UNITS = frozenset({"tokens"})
"""Units whose figures are whole numbers (shown without decimals, with grouping)."""


@dataclass(frozen=True)
class Outcome:
    """The overall status, the summary sentence and the checks split by whether they count."""

    status: str
    summary: str
    counted: tuple[CheckResult, ...]
    informational: tuple[CheckResult, ...]


def same_measurement(check: Any) -> tuple[Any, ...]:
    """What makes two checks one comparison: the record measured, the check, both
    figures and whether (and why not) it counts. Alternatives of a quote that compare the
    same record the same way (a record's prediction depends on its own settings, not on
    the alternative) repeat one measurement; ``check`` is a :class:`CheckResult` or a
    stored check."""
    if hasattr(check, "record_id"):
        record = check.record_id
    elif check.record is None:
        record = None
    else:
        record = getattr(check.record, "pk", None) or id(check.record)
    return (
        record,
        check.name,
        check.quantity,
        check.predicted,
        check.measured,
        check.counted,
        check.note,
    )


def once_per_quote(checks: Sequence[Any]) -> list[list[Any]]:
    """``checks`` grouped by :func:`same_measurement`, in order of first appearance: each
    group is one comparison, its checks the alternatives that repeat it."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for check in checks:
        groups.setdefault(same_measurement(check), []).append(check)
    return list(groups.values())


def overall_status(checks: Sequence[CheckResult]) -> str:
    """The worst status of the counted checks, or ``no_comparable_data`` without any."""
    counted = [c for c in checks if c.counted]
    if not counted:
        return NO_COMPARABLE_DATA
    return max((c.status for c in counted), key=STATUS_ORDER.index)


def percent(deviation: float) -> str:
    """A relative deviation as a signed percentage in the active language (``+4,2 %``)."""
    value = deviation * 100
    sign = "-" if round(value, 1) < 0 else "+"
    return f"{sign}{number_format(round(abs(value), 1), 1)} %"


def check_title(name: str) -> str:
    """A check's name in the active language: its title translated, the record kept."""
    head, sep, tail = name.partition(" — ")
    title = CHECK_TITLES.get(head)
    return f"{title}{sep}{tail}" if title is not None else name


def note_text(note: str) -> str:
    """A check's note in the active language (the notes the checks write).

    A class-fallback note (:func:`comparison.fallback_note`) is reworded from its parts;
    the published-range note is translated; any other note is returned as stored.
    """
    if note in (PUBLISHED_TTFT_NOT_COUNTED, PUBLISHED_TTFT_IN_SAMPLE):
        return _(note)
    hit = re.fullmatch(FALLBACK_NOTE_PATTERN, note)
    if hit is None:
        return note
    kind = (
        _(" (%(attention)s attention, %(band)s GiB of weights)")
        % {"attention": hit["attention"], "band": hit["band"]}
        if hit["attention"]
        else ""
    )
    return _(
        "another model of the same class%(kind)s: %(model)s; "
        "tolerance ±%(tolerance)s %%, at best within tolerance"
    ) % {"kind": kind, "model": hit["model"], "tolerance": hit["tolerance"]}


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
        str(part)
        for part in (QUANTITY_LABELS.get(worst.quantity, worst.quantity), _record_name(worst))
        if part
    )
    checks = ngettext("%(count)d check counted", "%(count)d checks counted", len(counted)) % {
        "count": len(counted)
    }
    starts_text = ngettext(
        "%(count)d measured engine start", "%(count)d measured engine starts", len(starts)
    ) % {"count": len(starts)}
    return _(
        "%(checks)s against %(starts)s (%(by_status)s); largest deviation %(largest)s (%(where)s)."
    ) % {
        "checks": checks,
        "starts": starts_text,
        "by_status": by_status,
        "largest": percent(worst.deviation),
        "where": where,
    }


def _fallback_sentence(counted: Sequence[CheckResult], plan_models: Sequence[str]) -> str:
    plan = {m.lower() for m in plan_models}
    measured = {c.record.model_id for c in counted if c.record is not None}
    others = sorted(m for m in measured if m.lower() not in plan)
    if not plan:
        return ""
    return class_fallback_sentence(others, only=len(others) == len(measured))


def class_fallback_sentence(others: Sequence[str], *, only: bool) -> str:
    """The caveat that ``others`` (model repository ids) were measured instead of the
    plan's model, in the active language; ``only`` when every counted check is such a
    class fallback. Empty when ``others`` is empty. The presales summary and the
    customer's PDF (:mod:`configurator.verification.customer`) word it alike."""
    if not others:
        return ""
    models = ", ".join(others)
    if only:
        return _(
            "Measured only on another model of the same class (%(models)s): "
            "such checks are at best within tolerance."
        ) % {"models": models}
    return _(
        "Partly measured on another model of the same class (%(models)s): "
        "such checks are at best within tolerance."
    ) % {"models": models}


def _informational_sentence(informational: Sequence[CheckResult]) -> str:
    groups: dict[tuple[str, str], list[CheckResult]] = {}
    for check in informational:
        groups.setdefault((check.quantity, check.note), []).append(check)
    parts = []
    for (quantity, note), checks in groups.items():
        worst = max(checks, key=lambda c: abs(c.deviation))
        count = ngettext(
            "%(count)d informational check", "%(count)d informational checks", len(checks)
        ) % {"count": len(checks)}
        parts.append(
            _("%(count)s of %(label)s (largest deviation %(largest)s), because %(reason)s")
            % {
                "count": count,
                "label": QUANTITY_LABELS.get(quantity, quantity),
                "largest": percent(worst.deviation),
                "reason": note_text(note) if note else _("not comparable"),
            }
        )
    return _("Not counted: %(parts)s.") % {"parts": "; ".join(parts)} if parts else ""


def uncovered(
    counted: Sequence[Any], alternatives: Sequence[str], names: Mapping[str, str]
) -> list[str]:
    """The titles (from ``names``, else as stored) of the ``alternatives`` that no
    counted check covers, in order."""
    covered = {c.alternative for c in counted}
    return [names.get(label, label) for label in alternatives if label not in covered]


def checks_outcome(
    checks: Sequence[CheckResult],
    *,
    alternatives: Sequence[str] = (),
    plan_models: Sequence[str] = (),
    alternative_names: Mapping[str, str] | None = None,
    language: str = "en",
) -> Outcome:
    """The overall status and summary of ``checks``.

    Args:
        checks: every check of a quote (all alternatives) or of one plan.
        alternatives: the labels of the quote's alternatives as stored on the checks;
            those without a counted check are named in the summary.
        plan_models: the plans' model repository ids; counted checks against records of
            other models are named as class fallbacks.
        alternative_names: the alternatives' titles in ``language``, by stored label;
            a label without one is named as stored.
        language: the language code of the summary (``"en"``, ``"de"``).

    Returns:
        The :class:`Outcome`; its summary is one to four sentences in ``language``. A
        measurement that several alternatives repeat (:func:`once_per_quote`) is one
        check of the outcome; it covers each of those alternatives.
    """
    names = alternative_names or {}
    distinct = [group[0] for group in once_per_quote(checks)]
    counted = tuple(c for c in distinct if c.counted)
    informational = tuple(c for c in distinct if not c.counted)
    status = overall_status(checks)
    with translation.override(language):
        if status == NO_COMPARABLE_DATA:
            sentences = [
                _(
                    "No benchmark data for this model class on this GPU class yet; "
                    "the sizing rests on the planning rules alone."
                )
            ]
        else:
            sentences = [_counted_sentence(counted), _fallback_sentence(counted, plan_models)]
            missing = uncovered([c for c in checks if c.counted], alternatives, names)
            if missing:
                sentences.append(
                    _("No comparable data for %(alternatives)s.")
                    % {"alternatives": "; ".join(missing)}
                )
        sentences.append(_informational_sentence(informational))
        summary = " ".join(s for s in sentences if s)
    return Outcome(status=status, summary=summary, counted=counted, informational=informational)
