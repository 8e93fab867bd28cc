"""The "Time between turns" select lists the default profile once (as the empty
choice, which the estimate states as an assumption), and a link naming that profile
still opens the estimate."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from sizing.traffic.profile import DEFAULT_PROFILE
from sizing.traffic.return_gaps import PROFILES

pytestmark = pytest.mark.django_db

EN = {"Accept-Language": "en"}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    """No Hub lookups from these tests, and a fresh rate-limit cache."""
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def gap_profile_options(html: str) -> list[tuple[str, str]]:
    select = re.search(r'<select name="gap_profile"[^>]*>(.*?)</select>', html, re.S)
    assert select, "no time-between-turns select"
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select.group(1))
    return [(value, html_lib.unescape(text)) for value, text in options]


def test_the_default_profile_is_listed_once(client: Client) -> None:
    options = gap_profile_options(client.get("/", headers=EN).content.decode())
    # sizing/traffic/profile.py: the default profile is "chat"; the empty choice stands for it.
    assert DEFAULT_PROFILE == "chat"
    assert options[0] == ("", "Chat (default)")
    assert [value for value, _text in options] == ["", "agent", "document_qa"]
    assert {value for value, _text in options[1:]} == set(PROFILES) - {DEFAULT_PROFILE}


def test_a_link_naming_the_default_profile_still_opens_the_estimate(client: Client) -> None:
    query = {"model": "Qwen/Qwen3-32B-FP8", "context_tokens": 8192, "users": 500}
    for profile, error in (("chat", ""), ("weekly", "weekly is not one of the")):
        html = client.get("/", {**query, "gap_profile": profile}, headers=EN).content.decode()
        slot = re.search(r'<p id="id_gap_profile_error"[^>]*>([^<]*)</p>', html)
        assert slot and (error in slot.group(1) if error else slot.group(1) == "")
    html = client.get("/", {**query, "gap_profile": "chat"}, headers=EN).content.decode()
    # Seed (docs/sizing.md): 204 conversations on the four cards.
    assert re.search(r'id="figure-resident">\s*<dt>[^<]*</dt>\s*<dd class="value">204<', html)
