"""The bundle download linked from a quote (staff only)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from configurator.deployments.forms import BundleOptionsForm
from configurator.deployments.services import bundle_build
from configurator.planning.services import plan_stored
from configurator.quotes.models import Quote
from configurator.web import staff_required


@require_GET
@staff_required
def quote_bundle(request: HttpRequest, pk: int) -> HttpResponse:
    """The ZIP bundle of a quote's alternative (``?alternative=<position>``, default first)."""
    quote = get_object_or_404(Quote, pk=pk)
    form = BundleOptionsForm(request.GET)
    position = request.GET.get("alternative") or None
    alternatives = quote.alternatives.all()
    chosen = (
        alternatives.filter(position=position).first()
        if position and position.isdigit()
        else alternatives.first()
        if position is None
        else None
    )
    if not form.is_valid() or chosen is None:
        if chosen is None:
            form.add_error(None, _("This quote has no alternative %(n)s.") % {"n": position or ""})
        return render(
            request, "deployments/bundle_error.html", {"quote": quote, "form": form}, status=400
        )
    plan = plan_stored(chosen.inputs)
    data = bundle_build(
        plan=plan, engine=form.cleaned_data["engine"], tiers=form.cleaned_data["tiers"]
    )
    name = quote.number or f"quote-{quote.pk}"
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{name}-bundle.zip"'
    return response
