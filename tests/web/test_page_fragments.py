"""The configurator page caches an unbound form's fields per language, never a bound
form's (templatetags/fragments.py), and the live estimate's TTFT chart and traffic
assumptions per language and content; the page must look the same as without the cache."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client

from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db


def test_a_shared_link_after_the_plain_page_shows_its_own_values(client: Client) -> None:
    plain = client.get("/", headers={"accept-language": "en"}).content.decode()
    assert 'name="users"' in plain and 'value="4321"' not in plain
    shared = client.get("/?users=4321", headers={"accept-language": "en"}).content.decode()
    assert 'value="4321"' in shared
    again = client.get("/", headers={"accept-language": "en"}).content.decode()
    assert again == plain.replace(_csrf(plain), _csrf(again))


def test_each_language_gets_its_own_fields(client: Client) -> None:
    english = client.get("/", headers={"accept-language": "en"}).content.decode()
    german = client.get("/", headers={"accept-language": "de"}).content.decode()
    assert "Users" in english and "Nutzer" in german
    assert "Nutzer" not in english.split("<fieldset", 1)[1].split("</fieldset>", 1)[0]


def _csrf(html: str) -> str:
    return html.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]


def _estimate(client: Client, language: str, **changes: Any) -> str:
    """The live estimate's partial for the seed workload with ``changes``; the users
    take turns (no active share), so the plan states its traffic assumptions."""
    data = seed_form(active_share="", **changes)
    headers = {"HX-Request": "true", "Accept-Language": language}
    response = client.post("/estimate/", data, headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def _between(html: str, start: str, end: str) -> str:
    assert start in html, f"{start!r} not in the estimate"
    return html.split(start, 1)[1].split(end, 1)[0]


def _ttft_chart(html: str) -> str:
    return _between(html, '<figure class="chart ttft-chart">', "</figure>")


def _assumptions(html: str) -> str:
    return _between(html, '<div class="notice assumptions traffic-assumptions"', "</div>")


def test_the_estimate_shows_the_chart_and_assumptions_of_its_own_inputs(client: Client) -> None:
    first = _estimate(client, "en")
    longer = _estimate(client, "en", context_tokens=16384)
    fewer_turns = _estimate(client, "en", turns=4)
    # another context draws another chart; given turns leave the turns assumption out
    assert _ttft_chart(longer) != _ttft_chart(first)
    assert "8 turns per conversation" in _assumptions(first)
    assert "turns per conversation" not in _assumptions(fewer_turns)
    caches["fragments"].clear()
    assert _ttft_chart(_estimate(client, "en", context_tokens=16384)) == _ttft_chart(longer)
    assert _assumptions(_estimate(client, "en", turns=4)) == _assumptions(fewer_turns)


def test_the_estimate_s_chart_and_assumptions_are_in_the_reader_s_language(
    client: Client,
) -> None:
    english = _estimate(client, "en")
    german = _estimate(client, "de")
    assert "Time to first token" in _ttft_chart(english)
    assert "Zeit bis zum ersten Token" in _ttft_chart(german)
    assert "turns per conversation" in _assumptions(english)
    assert "Gesprächsrunden je Gespräch" in _assumptions(german)
