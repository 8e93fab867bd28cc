"""Instructions per live estimate: the figure a shared, noisy machine cannot move.

The worker CPU time of :mod:`benchmarks.bench_estimate` swings by half between runs
minutes apart on the same code (other machines' work on the same host slows each
instruction); the number of instructions a request executes does not. This module counts
them with ``valgrind --tool=callgrind`` over :data:`REQUESTS` estimates in one process
(:mod:`benchmarks.estimate_instructions`: the application loaded as a web worker loads
it, the request the page sends), so that two commits compare on any machine of the kind.
Garbage collections run as in a worker and are counted; gunicorn's own HTTP handling is
not (about 1.3 M instructions a request, ``docs/benchmarks.md``).

Needs valgrind (``apt-get install valgrind``); without it the row says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.run import Result

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = 400
"""Enough estimates for the full collections a worker makes every few hundred."""
FIGURE = (
    "live estimate in one process (the page's url-encoded request, configurator.wsgi), "
    f"instructions per request (callgrind), {REQUESTS} requests"
)


def _total_instructions(out_file: Path) -> int:
    """The ``totals:`` line of a callgrind output file (its ``summary:`` line counts
    from the start, when the instrumentation was off)."""
    text = out_file.read_text(encoding="utf-8", errors="replace")
    found = re.search(r"^totals:\s*(\d+)", text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no instruction total in {out_file}")
    return int(found.group(1))


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
        ],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    per_request = _total_instructions(out_file) / REQUESTS
    shutil.rmtree(tmp, ignore_errors=True)
    return [Result("customer page", FIGURE, f"{per_request / 1e6:.2f} M", "-", True)]
