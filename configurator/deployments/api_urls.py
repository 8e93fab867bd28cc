"""``/api/``: the JSON API and its OpenAPI schema (``/api/openapi.json``).

A method an endpoint does not take (``GET /api/plans``) is answered 405 in the API's
error shape (:mod:`configurator.deployments.api_errors`) with the ``Allow`` header
django-ninja sets, instead of django-ninja's plain-text "Method not allowed"; a path
under ``/api/`` that is no endpoint is a 404 in the same shape.

The endpoints that size (:data:`RATE_LIMITED`) count each request against its client's
limit (``settings.RATE_LIMITS["api"]``) before django-ninja reads its body: a client
over the limit gets 429 with ``Retry-After`` for the cost of a cache lookup, whatever
it sent.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase, HttpResponseNotAllowed
from django.urls import URLPattern, URLResolver, path, re_path

from configurator.clients import rate_limited
from configurator.deployments.api import api
from configurator.deployments.api_errors import error_response

View = Callable[..., HttpResponseBase]

RATE_LIMITED = frozenset({"plan_post", "bundle_get", "recommendations_post"})
"""The endpoints (by URL name) that size a workload, and so are rate-limited."""


def throttled_first(view: View) -> View:
    """``view`` behind the client's API rate limit, checked before the body is read."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if rate_limited(request, "api"):
            limit = settings.RATE_LIMITS["api"]
            detail = f"too many requests from this client (at most {limit}); retry later"
            return error_response(
                field=None,
                code="rate_limited",
                detail=detail,
                status=429,
                headers={"Retry-After": "60"},
            )
        return view(request, *args, **kwargs)

    return wrapped


def json_not_allowed(view: View) -> View:
    """``view`` with its 405 answers in the API's error shape (``Allow`` kept); other
    answers pass unchanged. ``functools.wraps`` keeps the view's ``csrf_exempt``."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        if not isinstance(response, HttpResponseNotAllowed):
            return response
        allowed = response["Allow"]
        detail = f"{request.method} is not allowed here; use {allowed}"
        return error_response(
            field=None,
            code="method_not_allowed",
            detail=detail,
            status=405,
            headers={"Allow": allowed},
        )

    return wrapped


def _with_json_not_allowed(
    patterns: list[URLPattern | URLResolver],
) -> list[URLPattern | URLResolver]:
    wrapped: list[URLPattern | URLResolver] = []
    for p in patterns:
        if isinstance(p, URLPattern):
            view = json_not_allowed(p.callback)
            if p.name in RATE_LIMITED:
                view = throttled_first(view)
            p = URLPattern(p.pattern, view, p.default_args, p.name)
        wrapped.append(p)
    return wrapped


_patterns, _app_name, _namespace = api.urls


def no_endpoint(request: HttpRequest) -> HttpResponseBase:
    """404 for a path under ``/api/`` that is no endpoint (``/api/plans/``)."""
    detail = f"no API endpoint at {request.path}: see /api/docs"
    return error_response(field=None, code="not_found", detail=detail, status=404)


urlpatterns: list[URLPattern | URLResolver] = [
    path("", (_with_json_not_allowed(_patterns), _app_name, _namespace)),
    re_path(r"", no_endpoint),
]
