"""Hung services and anonymous bodies against the production shape (``make faults``).

gunicorn on 127.0.0.1 (``benchmarks/server.py``) with the cache and the broker each on
a ``redis-server`` of its own (``tests/web/faults.py``; never the machine's shared one),
the database of ``DATABASE_URL`` (PostgreSQL in production; the checkout's SQLite file
when unset), rate limits on.

1. Hung cache: the cache's Redis is stopped with SIGSTOP (it accepts connections and
   answers nothing); the start page, a live estimate, ``/api/plans`` and a quote request
   are each sent 5 times. Before: ``/estimate/`` and ``/api/plans`` 5.0 s, ``/quote/``
   10.3 s (redis-py's 5 s default).
2. Hung broker: the broker's Redis is stopped the same way; 5 quote requests (each
   publishes its mails). Before: 15-20 s.
3. Anonymous bodies: 20 posts of a 2.29 MB body with 200,000 unknown keys to
   ``/api/plans`` and ``/api/recommendations``; the workers' CPU time per request from
   ``/proc/<pid>/stat``. Before: 1.7-4.3 s each, answered with a 19.5 MB 422.

Bounded: some 60 requests in all.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import time
import urllib.parse
from collections.abc import Callable

from benchmarks.run import Result
from benchmarks.server import Server, gunicorn
from tests.seed_form import seed_form
from tests.web.faults import RedisServer

REPEATS = 5
BODIES = 20
TARGET_HOLD_S = 1.0
TARGET_CPU_MS = 50.0
FORM = "application/x-www-form-urlencoded"
SEED_FORM = seed_form()  # the seed example as the tests post it (tests/seed_form.py)


def _request(server: Server, method: str, path: str, body: bytes, content_type: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    headers = {
        "Content-Type": content_type,
        "X-CSRFToken": server.csrf_token,
        "Cookie": f"csrftoken={server.csrf_token}",
        "Accept-Language": "en",
    }
    conn.request(method, path, body=body or None, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status


def _requests(server: Server) -> dict[str, Callable[[int], int]]:
    """The four requests of a customer, by name; each takes a serial number."""
    estimate = urllib.parse.urlencode(SEED_FORM).encode()
    api = json.dumps({"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500}).encode()

    def quote(n: int) -> int:
        contact = {
            "name": "Dana",
            "company": "Beispiel GmbH",
            "email": f"faults-{time.time_ns()}-{n}@example.com",
            "consent": "on",
        }
        body = urllib.parse.urlencode({**SEED_FORM, **contact}).encode()
        return _request(server, "POST", "/quote/", body, FORM)

    return {
        "GET /": lambda n: _request(server, "GET", "/", b"", FORM),
        "POST /estimate/": lambda n: _request(server, "POST", "/estimate/", estimate, FORM),
        "POST /api/plans": lambda n: _request(
            server, "POST", "/api/plans", api, "application/json"
        ),
        "POST /quote/": quote,
    }


def _slowest(call: Callable[[int], int]) -> tuple[float, list[int]]:
    """The slowest of :data:`REPEATS` calls (s) and their statuses."""
    slowest, statuses = 0.0, []
    for n in range(REPEATS):
        start = time.perf_counter()
        statuses.append(call(n))
        slowest = max(slowest, time.perf_counter() - start)
    return slowest, statuses


def _hung(
    pause: RedisServer, names: list[str], server: Server
) -> dict[str, tuple[float, list[int]]]:
    calls = _requests(server)
    for name in names:  # warm: connections made, pages rendered once
        calls[name](0)
    pause.pause()
    try:
        return {name: _slowest(calls[name]) for name in names}
    finally:
        pause.resume()


def _workers_cpu_s(master_pid: int) -> float:
    """User and system CPU seconds of the gunicorn master's worker processes."""
    pids = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(master_pid)], capture_output=True, text=True
    ).stdout.split()
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _bodies(server: Server) -> dict[str, tuple[float, list[int]]]:
    keys = {f"x{i:06d}": 1 for i in range(200_000)}
    body = json.dumps(
        {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500, **keys},
        separators=(",", ":"),
    ).encode()
    answers = {}
    for path in ("/api/plans", "/api/recommendations"):
        before = _workers_cpu_s(server.pid)
        statuses = [_request(server, "POST", path, body, "application/json") for _ in range(BODIES)]
        cpu_ms = (_workers_cpu_s(server.pid) - before) / BODIES * 1e3
        answers[path] = (cpu_ms, statuses)
    return answers


def _status_counts(statuses: list[int]) -> str:
    return ", ".join(f"{statuses.count(s)} × {s}" for s in sorted(set(statuses)))


def run() -> list[Result]:
    cache, broker = RedisServer(), RedisServer()
    try:
        env = {
            "REDIS_CACHE_URL": cache.url(0),
            "CELERY_BROKER_URL": broker.url(0),
            "RATE_LIMITS_ENABLED": "true",
            "RATE_LIMIT_ESTIMATE": "100000/m",
            "RATE_LIMIT_API": "100000/m",
            "QUOTE_PDF_PRERENDER": "false",
        }
        with gunicorn(**env) as server:
            hung_cache = _hung(cache, list(_requests(server)), server)
            hung_broker = _hung(broker, ["POST /quote/"], server)
            bodies = _bodies(server)
    finally:
        cache.stop()
        broker.stop()
    results = []
    for name, (slowest_s, statuses) in hung_cache.items():
        results.append(
            Result(
                "faults",
                f"hung cache (SIGSTOP): {name}, slowest of {REPEATS} (s); answers",
                f"{slowest_s:.2f} s; {_status_counts(statuses)}",
                f"≤ {TARGET_HOLD_S:.0f} s, no 5xx (before: 5.0 s, /quote/ 10.3 s)",
                slowest_s <= TARGET_HOLD_S and max(statuses) < 500,
            )
        )
    slowest_s, statuses = hung_broker["POST /quote/"]
    results.append(
        Result(
            "faults",
            f"hung broker (SIGSTOP): POST /quote/, slowest of {REPEATS} (s); answers",
            f"{slowest_s:.2f} s; {_status_counts(statuses)}",
            f"≤ {TARGET_HOLD_S:.0f} s, no 5xx (before: 15-20 s)",
            slowest_s <= TARGET_HOLD_S and max(statuses) < 500,
        )
    )
    for path, (cpu_ms, statuses) in bodies.items():
        results.append(
            Result(
                "faults",
                f"2.29 MB body of 200,000 unknown keys to {path}: worker CPU per request; answers",
                f"{cpu_ms:.1f} ms; {_status_counts(statuses)}",
                f"≤ {TARGET_CPU_MS:.0f} ms (before: 1.7-4.3 s, a 19.5 MB 422)",
                cpu_ms <= TARGET_CPU_MS,
            )
        )
    return results
