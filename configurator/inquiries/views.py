"""The public configurator: the page, the live estimate, the quote request."""

from __future__ import annotations

import io
import logging
from functools import cache
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import InMemoryUploadedFile
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import redirect, render
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.datastructures import MultiValueDict
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import replace_url

from configurator.clients import client_address_of, rate_limited
from configurator.inquiries import chart, traffic_chart
from configurator.inquiries.estimates import plan_section
from configurator.inquiries.forms import ContactForm, WorkloadForm
from configurator.inquiries.models import Inquiry
from configurator.inquiries.recommendations import recommendations_context
from configurator.inquiries.services import (
    inquiry_create,
    inquiry_rate_count,
    inquiry_rate_limited,
)
from configurator.inquiries.workload_inputs import model_suggestions
from configurator.uploads import body_too_large, read_oversized_body
from configurator.web import HtmxHttpRequest
from sizing.hardware import catalog

logger = logging.getLogger(__name__)

SESSION_REFERENCE = "inquiries:last_reference"
SESSION_DUPLICATE = "inquiries:last_was_duplicate"


@cache
def _reversed(name: str, script_prefix: str, urlconf: str | None) -> str:
    """:func:`~django.urls.reverse` of ``name`` under ``script_prefix`` and ``urlconf``
    (what it reads from the request's thread), once per process for each of them."""
    return reverse(name, urlconf=urlconf)


def _path(name: str) -> str:
    """The path of the view ``name`` (no arguments) for the current request."""
    return _reversed(name, get_script_prefix(), get_urlconf())


def _page_url(query: str) -> str:
    """The configurator page's path with ``query`` (an encoded query string, or empty)."""
    return _path("inquiries:configurator") + (f"?{query}" if query else "")


def _estimate_context(
    request: HttpRequest, form: WorkloadForm, *, traffic: bool = True
) -> dict[str, Any]:
    """What the estimate partial shows for a bound (or unbound) workload form.

    ``traffic=False`` leaves out the two traffic charts: the live estimate loads them as
    their own fragment (:func:`estimate_traffic`) once they scroll into view.
    """
    query = form.share_query()
    share_url = _page_url(query)
    htmx = bool(getattr(request, "htmx", False))
    context: dict[str, Any] = {
        "form": form,
        "plan": form.plan,
        "htmx": htmx,
        "config_text": form.private_config_text,
        "share_url": share_url,
        "share_url_absolute": request.build_absolute_uri(share_url),
    }
    if htmx:
        # the live estimate clears the configurations shown for the old inputs
        context["recommendations_shown"] = request.POST.get("recommendations_shown")
    gpu_slug = form.data.get("gpu") if form.is_bound else form.fields["gpu"].initial
    gpu = catalog.gpus().get(str(gpu_slug or ""))
    # no hint for a GPU the catalog does not know (the GPU field shows the error)
    context["fp8_recommended"] = None if gpu is None else bool(gpu.fp8_kv_cache)
    plan = form.plan
    if plan is not None:
        private = form.private_config is not None
        workload = plan.request.workload
        active = workload.active_users
        context.update(
            private=private,
            plan_section=plan_section(
                plan,
                notice=form.notice,
                private_name=form.private_name if private else None,
                traffic_later=not traffic,
            ),
            active_users=active if active is not None and active < workload.users else None,
            all_users=workload.users,
            prompt_gib=chart.prompt_gib(plan) if workload.shared_prompt_tokens else None,
        )
    return context


def _page(
    request: HttpRequest,
    form: WorkloadForm,
    contact: ContactForm,
    *,
    status: int = 200,
    rate_limited: bool = False,
    extra: dict[str, Any] | None = None,
    unavailable: bool = False,
) -> HttpResponse:
    context = _estimate_context(request, form)
    context.update(extra or {})
    context.update(
        contact=contact,
        rate_limited=rate_limited,
        unavailable=unavailable,
        model_suggestions=model_suggestions(),
        presales_email=settings.PRESALES_EMAIL,
    )
    return render(request, "inquiries/configurator.html", context, status=status)


@require_GET
def configurator(request: HttpRequest) -> HttpResponse:
    """The configurator page; query parameters (a shared link) fill in the workload."""
    form = WorkloadForm.from_query(request.GET)
    if form.is_bound:
        form.is_valid()
    return _page(request, form, ContactForm())


def _too_many(request: HttpRequest) -> HttpResponse:
    """429 with a sentence, for a client over its rate limit."""
    response = HttpResponse(
        _("Too many requests from your address: please wait a minute."),
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = "60"
    return response


def _posted_form(
    request: HttpRequest, *, defaults: bool = False
) -> tuple[WorkloadForm, QueryDict, int | None]:
    """The posted workload form, the posted fields, and 413 when the body is over
    :data:`~configurator.uploads.PUBLIC_MAX_BODY_BYTES` (else ``None``).

    Such a body is read without keeping a file over 1 MB
    (:func:`~configurator.uploads.read_oversized_body`), so that the form refuses the
    file at its field and keeps the other inputs; a body too large to read at all gives
    the default workload with that file error. ``defaults``: a workload field the post
    leaves out takes its default (a config.json uploaded without JavaScript comes alone).
    """
    if body_too_large(request) and not read_oversized_body(request):
        size = int(request.META.get("CONTENT_LENGTH") or 0)
        unread = InMemoryUploadedFile(io.BytesIO(), "config_file", "unread", None, size, None)
        data = {**WorkloadForm.defaults(), "model": ""}
        form = WorkloadForm(data, MultiValueDict({"config_file": [unread]}))
        return form, QueryDict(), 413
    refused = 413 if body_too_large(request) else None
    posted: QueryDict = request.POST
    if defaults:
        posted = QueryDict(mutable=True)
        posted.update({**WorkloadForm.defaults(), "model": ""})
        for name, values in request.POST.lists():
            posted.setlist(name, values)
    return WorkloadForm(posted, request.FILES), posted, refused


def _back_to_the_page(request: HttpRequest) -> HttpResponse:
    """A ``GET`` of an address the form posts to (a reload, a bookmark or a shared address
    after the page was sent without JavaScript): the configurator with the same query."""
    return redirect(_page_url(request.META.get("QUERY_STRING", "")))


@require_http_methods(["GET", "POST"])
def estimate(request: HtmxHttpRequest) -> HttpResponse:
    """The estimate for the posted workload (the live estimate posts the form
    url-encoded): the partial for htmx, else the whole page; a ``GET`` goes back to the
    configurator page.

    Rate-limited per client (``settings.RATE_LIMITS["estimate"]``): 429 beyond it.
    """
    if request.method == "GET":
        return _back_to_the_page(request)
    if rate_limited(request, "estimate"):
        return _too_many(request)
    form, _, refused = _posted_form(request)
    return _estimate_response(request, form, refused)


@require_http_methods(["GET", "POST"])
def config_upload(request: HtmxHttpRequest) -> HttpResponse:
    """The estimate for a private model's config.json, posted in its own multipart
    request: with the page's other inputs (htmx sends them along), or alone from a
    browser without JavaScript, when the other inputs take their defaults. The page then
    keeps the file's text for the next estimates and the quote request. Answers as
    :func:`estimate` does, and is rate-limited with it.
    """
    if request.method == "GET":
        return _back_to_the_page(request)
    if rate_limited(request, "estimate"):
        return _too_many(request)
    form, _, refused = _posted_form(request, defaults=True)
    return _estimate_response(request, form, refused)


def _estimate_response(
    request: HtmxHttpRequest, form: WorkloadForm, refused: int | None
) -> HttpResponse:
    """The estimate for ``form``: the partial for htmx, else the whole page, with 413 for
    a body that was ``refused`` and 400 for a page whose form is invalid."""
    valid = form.is_valid()
    if request.htmx:
        context = _estimate_context(request, form, traffic=False)
        response = render(request, "inquiries/configurator.html#estimate", context, status=refused)
        return replace_url(response, context["share_url"])
    return _page(request, form, ContactForm(), status=refused or (200 if valid else 400))


@require_POST
def estimate_traffic(request: HttpRequest) -> HttpResponse:
    """The two traffic charts of the posted workload's plan (empty without a plan or a
    measured basis): the fragment the live estimate loads when the charts come into
    view. Rate-limited with the estimate."""
    if rate_limited(request, "estimate"):
        return _too_many(request)
    form, _, refused = _posted_form(request)
    traffic = {}
    if form.is_valid() and form.plan is not None:
        traffic = traffic_chart.charts(traffic_chart.curves(form.plan))
    return render(request, "inquiries/_traffic_charts.html", {"traffic": traffic}, status=refused)


@require_http_methods(["GET", "POST"])
def recommendations(request: HtmxHttpRequest) -> HttpResponse:
    """The cheapest configurations for the posted workload: the partial for htmx, else
    the whole page with them; a ``GET`` goes back to the configurator page."""
    if request.method == "GET":
        return _back_to_the_page(request)
    form, _, refused = _posted_form(request)
    valid = form.is_valid()
    context = recommendations_context(form)
    if request.htmx:
        partial = "inquiries/configurator.html#recommendations"
        return render(request, partial, context, status=refused)
    status = refused or (200 if valid else 400)
    return _page(request, form, ContactForm(), status=status, extra=context)


@require_POST
def quote_request(request: HttpRequest) -> HttpResponse:
    """Store an inquiry for the posted workload and contact, then confirm it."""
    form, posted, refused = _posted_form(request)
    contact = ContactForm(posted)
    client_address = client_address_of(request)
    email = str(posted.get("email", ""))[:254]
    if inquiry_rate_limited(client_address=client_address, email=email):
        form.is_valid()
        return _page(request, form, contact, status=429, rate_limited=True)
    valid = form.is_valid() & contact.is_valid()
    if valid and form.lookup_pending:
        # The model is being looked up: the page polls, then the customer sends again.
        return _page(request, form, contact, status=202)
    if not valid or form.plan is None:
        # the workload's errors are above the contact fields: say there that nothing was sent
        extra = {"workload_not_sent": form.plan is None and not form.lookup_pending}
        return _page(request, form, contact, status=refused or 400, extra=extra)
    try:
        inquiry, created = inquiry_create(
            workload=form.inquiry_columns(),
            plan=form.plan,
            contact=contact.cleaned_data,
            language=(get_language() or "de")[:2],
        )
    except DatabaseError:
        logger.exception("inquiry not stored: the database is unavailable")
        return _page(request, form, contact, status=503, unavailable=True)
    if created:
        inquiry_rate_count(client_address=client_address, email=contact.cleaned_data["email"])
    request.session[SESSION_REFERENCE] = inquiry.reference
    request.session[SESSION_DUPLICATE] = not created
    return HttpResponseRedirect(reverse("inquiries:thanks"), status=303)


@require_GET
def thanks(request: HttpRequest) -> HttpResponse:
    """The confirmation with the reference of the inquiry this browser just sent."""
    reference = request.session.get(SESSION_REFERENCE)
    if not reference:
        return redirect("inquiries:configurator")
    duplicate = bool(request.session.get(SESSION_DUPLICATE))
    inquiry = Inquiry.objects.filter(reference=reference).only("customer_mailed_at").first()
    context = {
        "reference": reference,
        "duplicate": duplicate,
        # Only what happened: sent, or still on its way (the mail task retries).
        "mail_sent": bool(inquiry and inquiry.customer_mailed_at),
    }
    return render(request, "inquiries/thanks.html", context)


@require_GET
def privacy(request: HttpRequest) -> HttpResponse:
    """The privacy notice the contact form links to."""
    return render(request, "privacy.html")
