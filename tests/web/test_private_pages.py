"""Presales' pages and quote PDFs are never stored by a browser or a proxy, and every
answer switches off the browser features the site never uses (configurator/web.py
``staff_required``, configurator/middleware.py ``PermissionsPolicyMiddleware``)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from configurator.quotes.services import quote_create_from_inquiry
from tests.quote_factories import make_inquiry

pytestmark = pytest.mark.django_db


def test_presales_pages_and_pdfs_are_private_and_not_stored(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    for url in (
        reverse("quotes:queue"),
        reverse("quotes:detail", args=[quote.pk]),
        reverse("quotes:pdf", args=[quote.pk]),
    ):
        response = presales.get(url)
        assert response.status_code == 200, url
        directives = {d.strip() for d in response["Cache-Control"].split(",")}
        assert {"private", "no-store"} <= directives, url


def test_the_sign_in_redirect_is_not_stored_either(client: Client) -> None:
    response = client.get(reverse("quotes:queue"))
    assert response.status_code == 302
    assert "no-store" in response["Cache-Control"]


def test_every_answer_switches_off_unused_browser_features(client: Client) -> None:
    for response in (client.get("/"), client.get("/no-such-page/"), client.get("/api/docs")):
        policy = response["Permissions-Policy"]
        assert "camera=()" in policy and "geolocation=()" in policy and "microphone=()" in policy
