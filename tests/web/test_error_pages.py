"""The site's own 404 and CSRF pages, in the visitor's language; a 404 under ``/api/`` in
the API's error shape (configurator/web.py ``not_found``, templates/404.html and
templates/403_csrf.html)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.seed_form import seed_form


@pytest.mark.parametrize(
    ("language", "heading"), [("de", "Seite nicht gefunden"), ("en", "Page not found")]
)
def test_a_missing_page_is_the_sites_own_in_the_visitors_language(
    client: Client, language: str, heading: str
) -> None:
    response = client.get("/no-such-page/", headers={"Accept-Language": language})
    page = response.content.decode()
    assert response.status_code == 404
    assert f"<h1>{heading}</h1>" in page and 'href="/"' in page
    assert 'class="site-header"' in page  # the site's header, with its language switch


def test_a_missing_api_endpoint_is_json(client: Client) -> None:
    response = client.get("/api/plans/")  # the endpoint is /api/plans, without the slash
    assert response.status_code == 404
    assert response.json() == {
        "field": None,
        "code": "not_found",
        "detail": "no API endpoint at /api/plans/: see /api/docs",
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("language", "heading"),
    [("de", "Das Formular ist abgelaufen"), ("en", "The form has expired")],
)
def test_a_form_without_its_security_token_is_explained(language: str, heading: str) -> None:
    # Django's CSRF check (a browser with cookies off, or a page open too long).
    client = Client(enforce_csrf_checks=True)
    response = client.post("/quote/", seed_form(), headers={"Accept-Language": language})
    page = response.content.decode()
    assert response.status_code == 403
    assert f"<h1>{heading}</h1>" in page and "CSRF verification failed" not in page
