"""Fixtures of the Django feature tests."""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django import Settings

from tests.quote_factories import make_presales


@pytest.fixture
def presales(client: Client) -> Client:
    """A signed-in presales user whose browser asks for English pages."""
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    client.force_login(make_presales())
    return client


@pytest.fixture(autouse=True)
def _no_pdf_prerender(settings: Settings) -> None:
    """Quote changes do not enqueue PDF renderings (where a broker is configured they
    would pile up for the real worker of test_celery_worker.py); the tests of that job
    switch it on with eager tasks."""
    settings.QUOTE_PDF_PRERENDER = False


@pytest.fixture(autouse=True)
def _generous_rate_limits(settings: Settings) -> None:
    """Per-client rate limits far above what any test sends from its one address.

    Tests of the limits themselves set lower ones (tests/web/test_rate_limits.py).
    """
    settings.RATE_LIMITS = {"estimate": "100000/m", "api": "100000/m"}
