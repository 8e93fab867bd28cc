"""Production settings pass ``manage.py check --deploy``; an empty DATABASE_URL is unset.

Settings are read once per process, so each case starts a fresh interpreter with the
environment docs/operations.md gives for production.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DJANGO_SECRET_KEY": "x" * 64 + "-a-long-random-production-key",
    "DJANGO_ALLOWED_HOSTS": "configurator.example.com",
    "DJANGO_HTTPS": "true",
    "DJANGO_BEHIND_TLS_PROXY": "true",
}


def run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "configurator.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


CHECK_DEPLOY = (
    "import django; django.setup(); from django.core.management import call_command; "
    "call_command('check', deploy=True, fail_level='WARNING')"
)


def test_production_settings_pass_check_deploy() -> None:
    result = run(CHECK_DEPLOY, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_without_https_check_deploy_names_what_is_missing() -> None:
    result = run(CHECK_DEPLOY, **{**PRODUCTION, "DJANGO_HTTPS": "false"})
    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in result.stderr


def test_an_empty_database_url_means_sqlite() -> None:
    code = "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])"
    result = run(code, DATABASE_URL="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "django.db.backends.sqlite3"
