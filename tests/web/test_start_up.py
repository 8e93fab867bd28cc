"""What a command imports at start-up: only what it needs.

The ``size`` command answers from the sizing engine; it must not pay for the PDF
renderer (WeasyPrint, fontTools, PIL), the holiday calendar, the Hub client, Celery or
the API framework, which only other commands and pages use. The expected module names
come from ``manage.py size`` under ``python -X importtime``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("weasyprint", "fontTools", "holidays", "PIL", "huggingface_hub", "celery", "ninja")


def _imported_top_level(args: list[str]) -> set[str]:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "true",
        "DJANGO_SETTINGS_MODULE": "configurator.settings",
    }
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_size_command_imports_no_pdf_hub_celery_or_api_framework() -> None:
    imported = _imported_top_level(
        ["size", "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500"]
    )
    assert "sizing" in imported  # the log is read correctly: the engine itself is there
    assert sorted(set(HEAVY) & imported) == []


def test_api_docs_page_serves_swagger_from_this_installation(client: Client) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'href="/static/ninja/swagger-ui.css"' in html
    assert "cdn" not in html.lower()
    assert client.get("/static/ninja/swagger-ui-bundle.js").status_code == 200


def test_every_task_is_declared_on_the_project_celery_app() -> None:
    """Each ``tasks`` module, imported alone in a fresh process (as a command that
    enqueues would), declares its tasks on ``configurator.celery.app``: a ``shared_task``
    there would bind to Celery's default app, whose broker is not configured."""
    script = (
        "import django, importlib, sys\n"
        "django.setup()\n"
        "from celery import Task\n"
        "module = importlib.import_module(sys.argv[1])\n"
        "for name, value in vars(module).items():\n"
        "    if isinstance(value, Task):\n"
        "        print(name, value.app.main)\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "configurator.settings"}
    rows = []
    for path in sorted((ROOT / "configurator").glob("*/tasks.py")):
        module = f"configurator.{path.parent.name}.tasks"
        done = subprocess.run(
            [sys.executable, "-c", script, module],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        rows += [[module, *line.split()] for line in done.stdout.splitlines()]
    assert ["configurator.verification.tasks", "verify_quote", "configurator"] in rows
    assert [row for row in rows if row[2] != "configurator"] == []
