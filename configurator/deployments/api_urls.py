"""``/api/``: the JSON API and its OpenAPI schema (``/api/openapi.json``).

A method an endpoint does not take (``GET /api/plans``) is answered 405 in the API's
error shape (:mod:`configurator.deployments.api_errors`) with the ``Allow`` header
django-ninja sets, instead of django-ninja's plain-text "Method not allowed"; a path
under ``/api/`` that is no endpoint is a 404 in the same shape.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponseBase, HttpResponseNotAllowed
from django.urls import URLPattern, URLResolver, path, re_path

from configurator.deployments.api import api
from configurator.deployments.api_errors import error_response

View = Callable[..., HttpResponseBase]


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
    return [
        URLPattern(p.pattern, json_not_allowed(p.callback), p.default_args, p.name)
        if isinstance(p, URLPattern)
        else p
        for p in patterns
    ]


_patterns, _app_name, _namespace = api.urls


def no_endpoint(request: HttpRequest) -> HttpResponseBase:
    """404 for a path under ``/api/`` that is no endpoint (``/api/plans/``)."""
    detail = f"no API endpoint at {request.path}: see /api/docs"
    return error_response(field=None, code="not_found", detail=detail, status=404)


urlpatterns: list[URLPattern | URLResolver] = [
    path("", (_with_json_not_allowed(_patterns), _app_name, _namespace)),
    re_path(r"", no_endpoint),
]
