"""The API's Swagger page, served from this installation (no CDN).

django-ninja is not an installed app: importing it at start-up would cost every
management command about a third of its start-up time. Its templates and static files
are on the template and static search paths instead (``configurator.settings``), and
this page renders ninja's own ``ninja/swagger.html`` through them, as ninja does when it
is an installed app.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from ninja import NinjaAPI
from ninja.constants import NOT_SET
from ninja.openapi.docs import Swagger


def _csrf_needed(api: NinjaAPI) -> bool:
    """Whether one of ``api``'s authentication handlers asks for a CSRF token."""
    if not api.auth or api.auth == NOT_SET:
        return False
    return any(getattr(handler, "csrf", False) for handler in api.auth)  # type: ignore[union-attr]


class LocalSwagger(Swagger):
    """ninja's Swagger UI page with its scripts and styles from our static files."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        """The Swagger UI page for ``api`` (its schema URL from ``kwargs``)."""
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        context = {
            "swagger_settings": json.dumps(self.settings, indent=1),
            "api": api,
            "add_csrf": _csrf_needed(api),
        }
        return render(request, self.template, context)
