"""The configurator page caches an unbound form's fields per language, never a bound
form's (templatetags/fragments.py); the page must look the same as without the cache."""

from __future__ import annotations

import pytest
from django.test import Client

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
