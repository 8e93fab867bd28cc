"""The presales workspace: the inquiry queue, the quote editor, issuing, the PDF."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from configurator.inquiries.models import Inquiry
from configurator.planning.recommend import recommendation_create
from configurator.quotes.deviations import alternative_deviation_texts
from configurator.quotes.due import due_at
from configurator.quotes.forms import (
    InquiryStatusForm,
    IssueForm,
    LineAddForm,
    LineQuantityForm,
    QuoteSettingsForm,
    RecommendedChoiceForm,
)
from configurator.quotes.inquiry_facts import inquiry_facts
from configurator.quotes.inquiry_queue import inquiry_queue
from configurator.quotes.models import Quote, QuoteAlternative, QuoteLine
from configurator.quotes.pdf_download import quote_pdf_download
from configurator.quotes.services import (
    QuoteDeviationError,
    QuoteFrozenError,
    quote_create_from_inquiry,
    quote_create_from_recommendation,
    quote_issue,
    quote_line_add,
    quote_line_set_provided,
    quote_line_set_quantity,
    quote_update,
)
from configurator.quotes.terms import vat_rate
from configurator.quotes.verification_reader import latest_verification
from configurator.web import HtmxHttpRequest, staff_required
from sizing.errors import SizingError


def _optional_url(name: str, pk: int) -> str:
    """The URL of a route another area provides, or '' until it exists."""
    try:
        return reverse(name, args=[pk])
    except NoReverseMatch:
        return ""


@require_GET
@staff_required
def queue(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status") or None
    if status not in (None, "all", *Inquiry.Status.values):
        status = None
    rows = inquiry_queue(now=timezone.now(), status=status)
    return render(
        request,
        "quotes/queue.html",
        {"rows": rows, "status": status or "", "statuses": Inquiry.Status.choices},
    )


def _recommendations(inquiry: Inquiry) -> dict[str, Any]:
    """The recommended configurations for the inquiry's workload, or why there are none."""
    try:
        recommendation = recommendation_create(
            inquiry.workload,
            private_config=inquiry.private_config,
            private_weights_gib=inquiry.private_weights_gib,
        )
        return {"recommendation": recommendation}
    except SizingError as exc:
        return {"recommendation_error": str(exc)}


def _inquiry_context(inquiry: Inquiry, status_form: InquiryStatusForm) -> dict[str, Any]:
    """What the inquiry page shows besides its recommendations."""
    return {
        "inquiry": inquiry,
        "facts": inquiry_facts(inquiry),
        "due_at": due_at(inquiry.received_at),
        "quotes": inquiry.quotes.all(),
        "status_form": status_form,
    }


@require_GET
@staff_required
def inquiry_detail(request: HttpRequest, pk: int) -> HttpResponse:
    inquiry = get_object_or_404(Inquiry, pk=pk)
    status_form = InquiryStatusForm(initial={"status": inquiry.status})
    return render(
        request,
        "quotes/inquiry_detail.html",
        {**_inquiry_context(inquiry, status_form), **_recommendations(inquiry)},
    )


@require_POST
@staff_required
def inquiry_status(request: HttpRequest, pk: int) -> HttpResponse:
    inquiry = get_object_or_404(Inquiry, pk=pk)
    form = InquiryStatusForm(request.POST)
    if not form.is_valid():
        return render(
            request, "quotes/inquiry_detail.html", _inquiry_context(inquiry, form), status=400
        )
    inquiry.status = form.cleaned_data["status"]
    inquiry.save(update_fields=["status"])
    return redirect("quotes:inquiry", pk=inquiry.pk)


@require_POST
@staff_required
def quote_create(request: HttpRequest, pk: int) -> HttpResponse:
    inquiry = get_object_or_404(Inquiry, pk=pk)
    try:
        quote = quote_create_from_inquiry(inquiry=inquiry, user=request.user)
    except SizingError as exc:
        messages.error(request, _("The inquiry cannot be sized: %(error)s") % {"error": exc})
        return redirect("quotes:inquiry", pk=inquiry.pk)
    return redirect("quotes:detail", pk=quote.pk)


@require_POST
@staff_required
def quote_create_recommended(request: HttpRequest, pk: int) -> HttpResponse:
    """Draft a quote from one recommended configuration, the others as alternatives."""
    inquiry = get_object_or_404(Inquiry, pk=pk)
    form = RecommendedChoiceForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose one of the recommended configurations."))
        return redirect("quotes:inquiry", pk=inquiry.pk)
    try:
        quote = quote_create_from_recommendation(
            inquiry=inquiry, user=request.user, choice=form.choice()
        )
    except SizingError as exc:
        messages.error(request, _("The inquiry cannot be sized: %(error)s") % {"error": exc})
        return redirect("quotes:inquiry", pk=inquiry.pk)
    return redirect("quotes:detail", pk=quote.pk)


def _editor_context(quote: Quote, **extra: Any) -> dict[str, Any]:
    alternatives = quote.alternatives.prefetch_related(
        Prefetch("lines", queryset=QuoteLine.objects.order_by("position", "pk"))
    )
    rows = [
        (
            alt,
            alt.totals(discount_percent=quote.discount_percent, vat_rate=vat_rate()),
            [] if quote.is_issued else alternative_deviation_texts(alt),
        )
        for alt in alternatives
    ]
    context: dict[str, Any] = {
        "quote": quote,
        "alternatives": rows,
        "issue_deviations": [
            (alt.label_in(quote.language), texts) for alt, _t, texts in rows if texts
        ],
        "issue_form": IssueForm(),
        "settings_form": QuoteSettingsForm(instance=quote),
        "add_form": LineAddForm(day=timezone.localdate()),
        "verification": (quote.snapshot or {}).get("verification")
        if quote.is_issued
        else latest_verification(quote),
        "unverified": not quote.is_issued and not _verification_finished(quote),
        "verify_url": _optional_url("verification:start", quote.pk),
        "bundle_url": _optional_url("deployments:quote_bundle", quote.pk),
    }
    context.update(extra)
    return context


def _verification_finished(quote: Quote) -> bool:
    """Whether ``quote`` has a verification report that has finished (any outcome)."""
    report = getattr(quote, "verification_report", None)  # None before the first run
    return report is not None and bool(report.is_done)


@require_GET
@staff_required
def quote_detail(request: HttpRequest, pk: int) -> HttpResponse:
    quote = get_object_or_404(Quote.objects.select_related("inquiry"), pk=pk)
    return render(request, "quotes/quote_detail.html", _editor_context(quote))


def _frozen(request: HttpRequest, quote: Quote) -> HttpResponse:
    messages.error(request, str(QuoteFrozenError(quote)))
    return render(request, "quotes/quote_detail.html", _editor_context(quote), status=409)


@require_POST
@staff_required
def quote_settings(request: HttpRequest, pk: int) -> HttpResponse:
    quote = get_object_or_404(Quote, pk=pk)
    if quote.is_issued:
        return _frozen(request, quote)
    form = QuoteSettingsForm(request.POST, instance=Quote.objects.get(pk=pk))
    if not form.is_valid():
        ctx = _editor_context(quote, settings_form=form)
        return render(request, "quotes/quote_detail.html", ctx, status=400)
    data = form.cleaned_data
    quote_update(
        quote=quote,
        discount_percent=data["discount_percent"],
        language=data["language"],
        notes=data["notes"],
    )
    return redirect("quotes:detail", pk=quote.pk)


def _alternative_response(
    request: HtmxHttpRequest, alt: QuoteAlternative, *, status: int = 200, **extra: Any
) -> HttpResponse:
    quote = alt.quote
    if request.htmx:
        ctx = {
            "quote": quote,
            "alt": alt,
            "add_form": LineAddForm(day=timezone.localdate()),
            "totals": alt.totals(discount_percent=quote.discount_percent, vat_rate=vat_rate()),
            "deviations": alternative_deviation_texts(alt),
            **extra,
        }
        return render(request, "quotes/quote_detail.html#alternative", ctx, status=status)
    if status != 200:
        return render(
            request, "quotes/quote_detail.html", _editor_context(quote, **extra), status=status
        )
    return redirect(f"{reverse('quotes:detail', args=[quote.pk])}#alt-{alt.pk}")


@require_POST
@staff_required
def line_quantity(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    line = get_object_or_404(QuoteLine.objects.select_related("alternative__quote"), pk=pk)
    alt = line.alternative
    if alt.quote.is_issued:
        return _frozen(request, alt.quote)
    form = LineQuantityForm(request.POST)
    if not form.is_valid():
        return _alternative_response(
            request,
            alt,
            status=400,
            error_line=line.pk,
            line_error=form.errors["quantity"],
            confirm_line=line.pk if form.asks_removal else None,
        )
    removed = {
        "sku": line.sku,
        "quantity": line.quantity,
        "description": line.description_in(alt.quote.language),
        "alt": alt.pk,
    }
    kept = quote_line_set_quantity(line=line, quantity=form.cleaned_data["quantity"])
    if kept is None:
        if request.htmx:
            return _alternative_response(request, alt, removed=removed)
        messages.info(request, _("Removed %(quantity)s × %(description)s (%(sku)s).") % removed)
    return _alternative_response(request, alt)


@require_POST
@staff_required
def line_provided(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Mark the shared-storage line as brought by the customer (``provides=1``) or sold
    (``provides=0``); other lines and other values answer 400."""
    line = get_object_or_404(QuoteLine.objects.select_related("alternative__quote"), pk=pk)
    alt = line.alternative
    if alt.quote.is_issued:
        return _frozen(request, alt.quote)
    provides = request.POST.get("provides")
    if provides not in ("0", "1") or not line.can_be_provided:
        return HttpResponseBadRequest(_("Only the shared storage line can be provided."))
    quote_line_set_provided(line=line, provides=provides == "1")
    return _alternative_response(request, alt)


@require_POST
@staff_required
def line_add(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    alt = get_object_or_404(QuoteAlternative.objects.select_related("quote"), pk=pk)
    if alt.quote.is_issued:
        return _frozen(request, alt.quote)
    form = LineAddForm(request.POST, day=timezone.localdate())
    if not form.is_valid():
        return _alternative_response(request, alt, status=400, add_form=form, add_alt=alt.pk)
    quote_line_add(
        alternative=alt, sku=form.cleaned_data["sku"], quantity=form.cleaned_data["quantity"]
    )
    return _alternative_response(request, alt)


@require_POST
@staff_required
def issue(request: HttpRequest, pk: int) -> HttpResponse:
    """Issue the draft and go back to it; a second submit (double click, another tab)
    finds it issued and says so instead of failing."""
    quote = get_object_or_404(Quote, pk=pk)
    now = timezone.now()
    form = IssueForm(request.POST)
    form.is_valid()  # a lone optional checkbox: always valid
    accept = bool(form.cleaned_data.get("accept_deviations"))
    try:
        issued = (
            quote
            if quote.is_issued
            else quote_issue(quote=quote, now=now, accept_deviations=accept)
        )
    except QuoteDeviationError:
        form.add_error(
            "accept_deviations",
            _(
                "The quote holds less than its sizing plan needs: "
                "confirm the deviations to issue it."
            ),
        )
        ctx = _editor_context(quote, issue_form=form)
        return render(request, "quotes/quote_detail.html", ctx, status=400)
    if issued.issued_at == now:
        messages.success(request, _("Quote %(number)s issued.") % {"number": issued.number})
    else:
        messages.info(
            request,
            _("Quote %(number)s had already been issued; it is unchanged.")
            % {"number": issued.number},
        )
    return redirect("quotes:detail", pk=issued.pk)


PDF_RETRY_S = 2
"""How often the page of a PDF being prepared asks for it again, seconds."""


@require_GET
@staff_required
def pdf(request: HttpRequest, pk: int) -> HttpResponse:
    """The quote's PDF as it is now, or (202) a page saying that it is being prepared,
    which asks again every :data:`PDF_RETRY_S` seconds until the PDF is stored."""
    quote = get_object_or_404(Quote.objects.select_related("inquiry"), pk=pk)
    body = quote_pdf_download(quote=quote)
    if body is None:
        ctx = {"quote": quote, "retry_s": PDF_RETRY_S}
        response = render(request, "quotes/pdf_preparing.html", ctx, status=202)
        response["Retry-After"] = str(PDF_RETRY_S)
        return response
    name = quote.number or f"draft-{quote.pk}"
    response = HttpResponse(body, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{name}.pdf"'
    return response
