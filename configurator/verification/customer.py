"""The verification as a customer reads it in the quote PDF.

The presales report lists every check with its deviation, record and notes; the customer
learns what was checked and how well, in one or two sentences: how many measured engine
starts on comparable GPUs the sizing was compared with, whether it matched, stayed within
the tolerance or differs, and which configurations have no comparable measurement yet.
The status of each configuration is the worst of its counted checks, as in
:func:`configurator.verification.outcome.overall_status`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from configurator.quotes.models import Quote
from configurator.quotes.verification_reader import VerificationSummary, read_verifications_with
from configurator.verification.comparison import FALLBACK_NOTE_PATTERN, STATUS_ORDER
from configurator.verification.models import VerificationCheck, VerificationReport
from configurator.verification.outcome import class_fallback_sentence, uncovered


def _result(status: str) -> str:
    if status == "verified":
        return _("the sizing matches the measurements")
    if status == "within_tolerance":
        return _("the sizing lies within the tolerance of the measurements")
    return _("the measurements differ from the sizing; we explain the difference on request")


def _fallback_models(counted: Sequence[VerificationCheck]) -> list[str | None]:
    """Per counted check, the other model it was measured on (its class-fallback note,
    :func:`configurator.verification.comparison.fallback_note`), else ``None``."""
    hits = (re.fullmatch(FALLBACK_NOTE_PATTERN, c.note or "") for c in counted)
    return [hit["model"] if hit else None for hit in hits]


def customer_summary(
    checks: Sequence[VerificationCheck],
    *,
    alternatives: Sequence[str],
    names: Mapping[str, str],
    language: str,
) -> str:
    """What was verified and how well, for the customer's PDF, in ``language``.

    Args:
        checks: the report's checks (counted and informational).
        alternatives: the quote's alternatives by stored label, in order.
        names: each stored label's title in ``language``.
        language: a language code of ``settings.LANGUAGES``.

    Returns:
        One to four sentences without check names, record ids or percentages; checks
        measured only (or partly) on another model of the same class carry the same
        caveat as the presales report (:func:`outcome.class_fallback_sentence`).
    """
    counted = [c for c in checks if c.counted]
    with translation.override(language):
        if not counted:
            return _(
                "No measurements of a comparable setup are available yet; the figures rest "
                "on our planning rules."
            )
        starts = len({c.record_id or c.pk for c in counted})
        status = max((c.status for c in counted), key=STATUS_ORDER.index)
        sentences = [
            ngettext(
                "The sizing was compared with %(n)s measured engine start on comparable "
                "GPUs: %(result)s.",
                "The sizing was compared with %(n)s measured engine starts on comparable "
                "GPUs: %(result)s.",
                starts,
            )
            % {"n": starts, "result": _result(status)}
        ]
        others = _fallback_models(counted)
        caveat = class_fallback_sentence(
            sorted({m for m in others if m}), only=all(m for m in others)
        )
        if caveat:
            sentences.append(caveat)
        missing = uncovered(counted, alternatives, names)
        if missing:
            sentences.append(
                _("Not yet compared with measurements: %(alternatives)s.")
                % {"alternatives": "; ".join(missing)}
            )
        return " ".join(sentences)


def quote_verification(quote: Quote, language: str) -> VerificationSummary | None:
    """The latest verification of ``quote``: its status, its presales summary and what
    the customer reads (:func:`customer_summary`), in ``language``; ``None`` before the
    first run. The quote document reads it through
    :func:`configurator.quotes.verification_reader.read_verifications_with`."""
    report = VerificationReport.objects.filter(quote=quote).first()
    if report is None:
        return None
    alternatives = list(quote.alternatives.all())
    with translation.override(language):
        return {
            "status": str(report.get_status_display()),
            "summary": report.summary_in(),
            "customer_summary": customer_summary(
                list(report.checks.all()),
                alternatives=[alt.label for alt in alternatives],
                names={alt.label: alt.label_in(language) for alt in alternatives},
                language=language,
            ),
        }


def register() -> None:
    """Make quote documents carry their verification (called when Django starts)."""
    read_verifications_with(quote_verification)
