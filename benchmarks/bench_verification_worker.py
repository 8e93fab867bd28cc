"""Verification report end to end with a real Celery worker (target: under 3 s).

Starts a worker process on Redis and a client process that starts the seed quote's
verification and waits for the report, both on a fresh SQLite file database (so the
two processes share it). Needs Redis at ``BENCH_REDIS_URL`` (default
``redis://127.0.0.1:6379/14``); without it the figure is reported as not measured.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import redis

from benchmarks.run import Result

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")


def run() -> list[Result]:
    figure = "seed quote: start → report done, real worker (median of 5)"
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        return [Result("verification", figure, f"not measured: {exc}", "< 3 s", False)]
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
            "CELERY_BROKER_URL": REDIS_URL,
        }
        python = sys.executable
        subprocess.run(
            [python, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
        )
        worker = subprocess.Popen(
            [python, "-m", "celery", "-A", "configurator", "worker", "--pool=solo",
             "--loglevel=warning", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            done = subprocess.run(
                [python, "-m", "benchmarks.verify_e2e_client", "5"],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
    data = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    if "runs_s" not in data:
        detail = data.get("error") or done.stderr.strip()[-200:]
        return [Result("verification", figure, f"failed: {detail}", "< 3 s", False)]
    median = statistics.median(data["runs_s"])
    worst = max(data["runs_s"])
    return [
        Result(
            "verification",
            figure,
            f"{median:.2f} s (slowest {worst:.2f} s, status {data['status']})",
            "< 3 s",
            worst < 3,
        )
    ]
