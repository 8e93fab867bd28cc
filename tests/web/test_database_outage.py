"""PostgreSQL down or hung: every visitor gets the site's own pages, never a bare 500.

A fresh process (settings are read once) with ``DATABASE_URL`` on a loopback port where
nothing listens (down), or on a listener of the test's own that accepts connections and
answers nothing (hung: ``connect_timeout`` ends the wait); the requests go through
Django's test client in that process. A returning visitor sends a session cookie, whose
session cannot be read: the public pages are still served (signed out), the quote request
answers 503 with presales' address, and a page that needs the database is the site's 503
page, in the visitor's language.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.faults import environment_without
from tests.web.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json, sys
import django
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
from tests.seed_form import seed_form
language, cookie = sys.argv[1], sys.argv[2] == "cookie"
client = Client(headers={"Accept-Language": language}, raise_request_exception=False)
if cookie:
    client.cookies["sessionid"] = "a" * 32  # a returning visitor's session
contact = {"name": "Dana", "company": "B", "email": "d@example.com", "consent": "on"}
answers = {}
for name, call in [
    ("start", lambda: client.get("/")),
    ("quote_request", lambda: client.post("/quote/", {**seed_form(), **contact})),
    ("thanks", lambda: client.get("/quote/thanks/")),
    ("sign_in", lambda: client.post("/accounts/login/", {"username": "p", "password": "pw"})),
]:
    response = call()
    answers[name] = [response.status_code, response.content.decode()]
print(json.dumps(answers))
"""


def run_with_database(url: str, language: str, cookie: bool) -> dict[str, list[object]]:
    env = environment_without("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_CACHE_URL")
    env.update(
        DJANGO_SETTINGS_MODULE="configurator.settings",
        DATABASE_URL=url,
        HF_HUB_OFFLINE="true",
        PRESALES_EMAIL="presales@example.com",
        PYTHONPATH=str(ROOT),
    )
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, language, "cookie" if cookie else "none"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    answers: dict[str, list[object]] = json.loads(result.stdout.strip().splitlines()[-1])
    return answers


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """A port that accepts connections and never answers: a hung PostgreSQL."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield int(listener.getsockname()[1])


UNAVAILABLE = {"en": "Temporarily unavailable", "de": "Vorübergehend nicht erreichbar"}
NOT_STORED = {"en": "could not be stored", "de": "konnte gerade nicht gespeichert werden"}


@pytest.mark.parametrize(("language", "cookie"), [("en", True), ("de", True), ("en", False)])
def test_every_visitor_gets_the_sites_pages_with_the_database_down(
    language: str, cookie: bool
) -> None:
    answers = run_with_database(
        f"postgres://postgres@127.0.0.1:{free_port()}/down", language, cookie
    )
    status, page = answers["start"]
    assert status == 200 and 'id="quote"' in str(page)  # the configurator, signed out
    status, page = answers["quote_request"]
    assert status == 503 and NOT_STORED[language] in str(page)
    assert "presales@example.com" in str(page)
    # Pages that need the database (the thanks page reads the session: a new visitor
    # has none and is sent to the start page).
    for name in ("thanks", "sign_in") if cookie else ("sign_in",):
        status, page = answers[name]
        assert status == 503, name
        assert UNAVAILABLE[language] in str(page) and "presales@example.com" in str(page)
        assert "Server Error (500)" not in str(page)


def test_a_hung_database_gives_the_same_pages(silent_listener: int) -> None:
    answers = run_with_database(
        f"postgres://postgres@127.0.0.1:{silent_listener}/hung", "en", cookie=True
    )
    assert [answers[name][0] for name in answers] == [200, 503, 503, 503]
    assert "presales@example.com" in str(answers["thanks"][1])
