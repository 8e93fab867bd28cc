"""Messages to presales still reach the next page, and requests that use no messages
(the live estimate) leave the message storage alone: it is made only where a request
uses it (configurator.middleware)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.functional import empty

from tests.quote_factories import make_inquiry
from tests.seed_form import seed_form

NO_CHOICE = "Choose one of the recommended configurations."
"""The message of configurator.quotes.views.quote_create_recommended without a choice."""


@pytest.mark.django_db
def test_a_message_shows_on_the_next_page_once(presales: Client) -> None:
    inquiry = make_inquiry()
    url = reverse("quotes:create_recommended", args=[inquiry.pk])
    response = presales.post(url, {})
    assert response.status_code == 302
    page = presales.get(response["Location"]).content.decode()
    assert NO_CHOICE in page
    assert NO_CHOICE not in presales.get(response["Location"]).content.decode()


@pytest.mark.django_db
def test_the_live_estimate_makes_no_message_storage(client: Client) -> None:
    client.cookies["messages"] = "kept-for-a-later-page"
    response = client.post(reverse("inquiries:estimate"), seed_form(), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response.wsgi_request._messages._wrapped is empty  # type: ignore[attr-defined]
    assert "messages" not in response.cookies  # neither rewritten nor deleted
