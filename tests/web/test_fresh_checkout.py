"""Commands that need the database, on a checkout that never ran ``migrate``: one line
saying what to run, exit status 2, and no empty database file left behind.

Each case is a fresh ``manage.py`` process, as a user would run it, with an SQLite file
that does not exist yet.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(argv: list[str], database: Path) -> subprocess.CompletedProcess[str]:
    """``manage.py argv`` in a fresh process whose SQLite database is ``database``."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    return subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=ROOT,
        env={**env, "DATABASE_URL": f"sqlite:///{database}", "HF_HUB_OFFLINE": "true"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "10"],
        ["import_benchmarks", "--initial"],
    ],
)
def test_a_command_on_an_unmigrated_checkout_says_what_to_run(
    tmp_path: Path, argv: list[str]
) -> None:
    database = tmp_path / "db.sqlite3"
    result = manage(argv, database)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "run `manage.py migrate` first" in lines[0]
    assert not database.exists()


@pytest.mark.parametrize("command", ["size", "recommend"])
def test_a_command_that_needs_no_database_creates_none(tmp_path: Path, command: str) -> None:
    database = tmp_path / "db.sqlite3"
    argv = [command, "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "10"]
    result = manage(argv, database)
    assert result.returncode == 0, result.stderr
    assert not database.exists()
