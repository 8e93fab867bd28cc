"""Presales start a quote's verification and watch its report (polled with htmx)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from configurator.quotes.models import Quote
from configurator.verification.models import VerificationReport
from configurator.verification.outcome import once_per_quote
from configurator.verification.tasks import verification_start
from configurator.web import HtmxHttpRequest, staff_required


def _context(quote: Quote) -> dict[str, object]:
    report = VerificationReport.objects.filter(quote=quote).prefetch_related("checks").first()
    checks = []
    for group in once_per_quote(list(report.checks.all()) if report else []):
        group[0].repeats = tuple(group[1:])
        checks.append(group[0])
    return {
        "quote": quote,
        "report": report,
        "counted_checks": [c for c in checks if c.counted],
        "informational_checks": [c for c in checks if not c.counted],
    }


@require_POST
@staff_required
def start(request: HtmxHttpRequest, quote_pk: int) -> HttpResponse:
    """Start (or restart) the verification job of quote ``quote_pk``."""
    quote = get_object_or_404(Quote, pk=quote_pk)
    verification_start(quote=quote)
    if request.htmx:
        return render(request, "verification/report.html#status", _context(quote))
    return redirect("verification:report", quote_pk=quote.pk)


@require_GET
@staff_required
def report(request: HtmxHttpRequest, quote_pk: int) -> HttpResponse:
    """The verification report of quote ``quote_pk``; htmx polls its status partial."""
    quote = get_object_or_404(Quote, pk=quote_pk)
    template = "verification/report.html#status" if request.htmx else "verification/report.html"
    return render(request, template, _context(quote))
