"""Instructions per live estimate: the figure a shared, noisy machine cannot move.

The worker CPU time of :mod:`benchmarks.bench_estimate` swings by half between runs
minutes apart on the same code (other machines' work on the same host slows each
instruction); the number of instructions a request executes does not. This module counts
them with ``valgrind --tool=callgrind`` over :data:`REQUESTS` estimates in one process
(:mod:`benchmarks.estimate_instructions`: the application loaded as a web worker loads
it, the request the page sends), so that two commits compare on any machine of the kind.
Garbage collections run as in a worker and are counted; gunicorn's own HTTP handling is
not (about 1.3 M instructions a request, ``docs/benchmarks.md``).

A second row counts the same in the production setup (:mod:`benchmarks.production`:
PostgreSQL, Redis as the cache, rate limits on, the trusted proxy) with the request the
page's htmx sent from headless Chromium (:mod:`benchmarks.browser_request`, captured
from a gunicorn server of that setup first); its Redis and PostgreSQL round trips are
counted on our side only.

Needs valgrind (``apt-get install valgrind``), and Chromium for the second row; without
them the rows say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.browser_request import capture_estimate, chromium_path
from benchmarks.production import production_setup, server_settings
from benchmarks.run import Result
from benchmarks.server import gunicorn

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = 400
"""Enough estimates for the full collections a worker makes every few hundred."""
FIGURE = (
    "live estimate in one process (the page's url-encoded request, configurator.wsgi), "
    f"instructions per request (callgrind), {REQUESTS} requests"
)
PRODUCTION_FIGURE = (
    "live estimate in one process, production setup (PostgreSQL, Redis cache, rate limits, "
    f"trusted proxy; the browser's request), instructions per request (callgrind), {REQUESTS} "
    "requests"
)


def _total_instructions(out_file: Path) -> int:
    """The ``totals:`` line of a callgrind output file (its ``summary:`` line counts
    from the start, when the instrumentation was off)."""
    text = out_file.read_text(encoding="utf-8", errors="replace")
    found = re.search(r"^totals:\s*(\d+)", text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no instruction total in {out_file}")
    return int(found.group(1))


def _per_request(env: dict[str, str], tmp: Path, *extra: str) -> float:
    """Instructions per estimate of :mod:`benchmarks.estimate_instructions` under
    callgrind in ``env`` (``extra``: its further arguments)."""
    out_file = tmp / "callgrind.out"
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out_file}",
            sys.executable,
            "-m",
            "benchmarks.estimate_instructions",
            str(REQUESTS),
            *extra,
        ],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return _total_instructions(out_file) / REQUESTS


def _production(tmp: Path) -> Result:
    chromium = chromium_path()
    if chromium is None:
        return Result("customer page", PRODUCTION_FIGURE, "not measured: no Chromium", "-", True)
    with production_setup() as env:
        with gunicorn(**server_settings(env)) as server:
            captured = capture_estimate(server.port, chromium)
        saved = tmp / "captured.json"
        record = {
            "path": captured.path,
            "headers": captured.headers,
            "body": captured.body.decode("latin-1"),
        }
        saved.write_text(json.dumps(record), encoding="utf-8")
        per_request = _per_request(env, tmp, str(saved))
    return Result("customer page", PRODUCTION_FIGURE, f"{per_request / 1e6:.2f} M", "-", True)


def run() -> list[Result]:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        return [Result("customer page", FIGURE, "not measured: valgrind not installed", "-", True)]
    tmp = Path(tempfile.mkdtemp(prefix="bench-instructions-"))
    env = {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "HF_HUB_OFFLINE": "true",
        "RATE_LIMITS_ENABLED": "false",
        "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
    }
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-key-not-for-production-use-0123456789")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    results = [Result("customer page", FIGURE, f"{_per_request(env, tmp) / 1e6:.2f} M", "-", True)]
    results.append(_production(tmp))
    shutil.rmtree(tmp, ignore_errors=True)
    return results
