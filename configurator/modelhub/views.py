"""Model autocomplete: suggestions from the offline catalog and the cache of Hub lookups."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from configurator.modelhub.forms import ModelSearchForm
from configurator.modelhub.search import model_search
from configurator.web import HtmxHttpRequest


@require_GET
def autocomplete(request: HtmxHttpRequest) -> HttpResponse:
    """Model ids matching ``q``: ``<option>`` elements for htmx, else a search page."""
    form = ModelSearchForm({key: request.GET[key] for key in ("q", "model") if key in request.GET})
    valid = form.is_valid()
    choices = model_search(query=form.cleaned_data["q"]) if valid else []
    template = "modelhub/autocomplete.html"
    if request.htmx:
        template += "#options"
    return render(
        request, template, {"form": form, "choices": choices}, status=200 if valid else 400
    )
