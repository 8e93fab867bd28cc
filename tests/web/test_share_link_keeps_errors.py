"""An input with an error stays in the address bar and the language switch, so that
switching the language shows the same input with the same error; an input too long or
not on one line is left out of them. The other inputs are the seed example (docs/sizing.md)."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.cache import cache
from django.test import Client

from configurator.inquiries.forms import MAX_ECHOED_INPUT_CHARS
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    """No Hub lookups from these tests, and a fresh rate-limit cache."""
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]*)</p>', html)
    assert match, f"no error slot for {field}"
    return html_lib.unescape(match.group(1)).strip()


def language_next(html: str) -> str:
    match = re.search(r'<input id="language-next" name="next" type="hidden" value="([^"]+)"', html)
    assert match, "no language switch target"
    return html_lib.unescape(match.group(1))


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


# Each input is outside what the form or the engine accepts: users and context above or
# below their field limits (workload_fields.limits), a model id with a space, and a
# tensor-parallel size that does not divide the model's attention heads.
INVALID = [
    ("users", "2000000"),
    ("context_tokens", "0"),
    ("model", "bad id"),
    ("tensor_parallel_size", "3"),
]


@pytest.mark.parametrize(("field", "value"), INVALID)
def test_an_input_with_an_error_survives_the_language_switch(
    client: Client, field: str, value: str
) -> None:
    live = client.post("/estimate/", seed_form(**{field: value}), headers={**HTMX, **EN})
    html = live.content.decode()
    error = field_error(html, field)
    assert error, f"{field}={value} should be refused"
    target = language_next(html)
    # The address bar and the language switch carry the input (no estimate, so no
    # share link is shown: it would be the same address).
    assert query(live["HX-Replace-Url"])[field] == [value]
    assert target == live["HX-Replace-Url"]
    switched = client.post("/i18n/setlang/", {"language": "de", "next": target})
    assert switched.status_code == 302 and switched["Location"] == target
    page = client.get(switched["Location"]).content.decode()
    assert '<html lang="de">' in page
    assert re.search(rf'name="{field}"[^>]* value="{re.escape(value)}"', page)
    assert field_error(page, field)  # the same error, now in German
    assert 'id="figure-resident"' not in page  # no estimate for the refused input
    # Back in English the error reads as on the live estimate.
    client.post("/i18n/setlang/", {"language": "en", "next": target})
    assert field_error(client.get(target).content.decode(), field) == error


@pytest.mark.parametrize(
    "value",
    [
        "9" * (MAX_ECHOED_INPUT_CHARS + 1),
        "12\n34",
        "12\x0034",
        "12\t34",
    ],
)
def test_a_long_or_multi_line_input_with_an_error_is_left_out(client: Client, value: str) -> None:
    live = client.post("/estimate/", seed_form(users=value), headers={**HTMX, **EN})
    html = live.content.decode()
    assert field_error(html, "users")
    for url in (live["HX-Replace-Url"], language_next(html)):
        assert "users" not in query(url)
        assert query(url)["context_tokens"] == ["8192"]  # the valid inputs stay


def test_an_input_with_an_error_at_the_length_limit_is_kept(client: Client) -> None:
    value = "9" * MAX_ECHOED_INPUT_CHARS
    live = client.post("/estimate/", seed_form(users=value), headers={**HTMX, **EN})
    assert field_error(live.content.decode(), "users")
    assert query(live["HX-Replace-Url"])["users"] == [value]
