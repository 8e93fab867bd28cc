"""PostgreSQL down: the quote request answers 503 with the presales address, no 500.

A fresh process (settings are read once) with ``DATABASE_URL`` on a loopback port where
nothing listens; the request goes through Django's test client in that process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.web.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import django
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
from tests.seed_form import seed_form
contact = {"name": "Dana", "company": "B", "email": "d@example.com", "consent": "on"}
response = Client().post("/quote/", {**seed_form(), **contact}, headers={"Accept-Language": "en"})
html = response.content.decode()
print(response.status_code, "presales@example.com" in html, "could not be stored" in html)
"""


def test_quote_request_with_the_database_down_shows_the_presales_contact() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="configurator.settings",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{free_port()}/down",
        HF_HUB_OFFLINE="true",
        PRESALES_EMAIL="presales@example.com",
        PYTHONPATH=str(ROOT),
    )
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["503", "True", "True"]
