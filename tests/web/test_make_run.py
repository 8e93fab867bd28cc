"""``make run``, the README's first command: it sets up and serves the product with
SQLite and in-process tasks, and serves it as production does (no DEBUG), with a secret
key of its own when none is configured (``configurator.wsgi`` refuses to serve without).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def dry_run(**env: str) -> list[str]:
    """The commands ``make run`` would run (``make -n``), with ``env`` on top of a
    clean environment (no database, broker or key from the caller's)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    names = ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_DEBUG")
    base = {k: v for k, v in os.environ.items() if k not in names and "SECRET_KEY" not in k}
    done = subprocess.run(
        ["make", "-n", "run", "PORT=8765"],
        cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.splitlines()


def test_make_run_serves_without_debug_and_with_a_key_of_its_own() -> None:
    lines = dry_run()
    commands = [line for line in lines if "manage.py" in line]
    assert [c.split("manage.py ")[1].split()[0] for c in commands] == [
        "migrate",
        "demo_setup",
        "runserver",
    ]
    assert not any("DJANGO_DEBUG" in line for line in lines)
    assert all(c.startswith("DJANGO_SECRET_KEY_FILE=.local-secret-key ") for c in commands)
    # SQLite and in-process tasks: nothing points the settings elsewhere
    assert not any("DATABASE_URL" in line or "CELERY_BROKER_URL" in line for line in lines)


def test_a_configured_key_is_used_as_it_is() -> None:
    commands = [line for line in dry_run(DJANGO_SECRET_KEY="k" * 50) if "manage.py" in line]
    assert commands and not any("SECRET_KEY" in c for c in commands)
