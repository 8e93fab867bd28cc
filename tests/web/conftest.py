"""Fixtures of the Django feature tests."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.quote_factories import make_presales


@pytest.fixture
def presales(client: Client) -> Client:
    """A signed-in presales user whose browser asks for English pages."""
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    client.force_login(make_presales())
    return client
