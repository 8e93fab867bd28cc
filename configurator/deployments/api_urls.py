"""``/api/``: the JSON API and its OpenAPI schema (``/api/openapi.json``)."""

from django.urls import URLPattern, URLResolver, path

from configurator.deployments.api import api

urlpatterns: list[URLPattern | URLResolver] = [path("", api.urls)]
