"""The customer page under load in the production setup: the live estimate as the
browser sends it, and ``GET /``.

The setup is that of ``docs/operations.md`` (:mod:`benchmarks.production`): gunicorn on
127.0.0.1 with one sync worker per CPU core, PostgreSQL, Redis as the cache (rate limits
count there) and the Celery broker, a Celery worker, rate limits on, static files
collected (hashed, compressed) and served by WhiteNoise, and the site behind a reverse
proxy (``DJANGO_TRUSTED_PROXIES=127.0.0.1``). Each estimate is the request the page's
htmx sent from headless Chromium while the seed workload was typed
(:mod:`benchmarks.browser_request`: its headers and its body as captured), replayed with
a new number of users each time, so no request repeats an earlier one, and with the
``X-Forwarded-For`` address of its client: each of the :data:`CLIENTS` clients has its
own address (in 198.18.0.0/15, the range set aside for benchmarks, RFC 2544), a new one
in each round, so that every client stays under its 120 estimates a minute as a customer
does. A last check sends one client's estimates until the limit answers 429 and another
client is still served.

Figures:

- CPU per request in the workers: the workers' user + system CPU time
  (``/proc/<pid>/stat``) over the measured requests, divided by their number (target:
  at most 4 ms for the estimate, 5 ms for ``GET /``). CPU time is what the shared
  machine cannot inflate by scheduling other work; the clients' own CPU is not counted.
- latency at 20 concurrent clients (median / p95, target p95 at most 100 ms), alone and
  while one presales user downloads a quote PDF in a loop (the four-alternative draft
  made from an inquiry, rendered once by the Celery worker when the quote is made; the
  downloads are served from the store, see ``configurator.quotes.pdf_download``).
- the first load's weight: HTML, CSS and JavaScript, as sent compressed and uncompressed.

Without Chromium (``apt-get install chromium``) the rows say that nothing was measured.
"""

from __future__ import annotations

import gzip
import ipaddress
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.browser_request import CapturedRequest, capture_estimate, chromium_path
from benchmarks.production import production_setup, server_settings
from benchmarks.run import Result
from benchmarks.server import gunicorn

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = 20
REQUESTS_PER_CLIENT = 25
RATE_LIMIT_CHECK = 240
"""Requests one client sends at most before its 120-a-minute estimate limit must answer
429 (twice the limit: a fixed window may turn over once meanwhile)."""
SEED = {
    "model": "Qwen/Qwen3-32B-FP8",
    "context_tokens": "8192",
    "users": "500",
    "active_share_percent": "100",
    "system_prompt_tokens": "0",
    "kv_dtype": "fp8",
    "gpu": "rtx-pro-6000-se",
    "gpus_per_node": "4",
    "serving_engine": "",
    "new_conversations_per_day": "2000",
}
"""The seed workload as the form's fields (the other page benchmarks post it)."""
SETUP = """
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from configurator.quotes.services import quote_create_from_inquiry
from tests.quote_factories import make_inquiry, make_presales
user = make_presales()
quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=user)
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(quote.pk, session.session_key)
"""


def _request(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one raw HTTP/1.1 request (the server closes the connection after it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(raw)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}\n{value.strip()}" if key in headers else value.strip()
    return int(lines[0].split()[1]), headers, body


def _get(path: str, *, cookie: str = "", gzip_ok: bool = False, client: str = "") -> bytes:
    extra = f"Cookie: {cookie}\r\n" if cookie else ""
    extra += "Accept-Encoding: gzip\r\n" if gzip_ok else ""
    extra += f"X-Forwarded-For: {client}\r\n" if client else ""
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Language: de\r\n{extra}"
        "Connection: close\r\n\r\n"
    ).encode()


def _first_load_bytes(port: int) -> tuple[int, int]:
    """Bytes of the page and its stylesheets and scripts: uncompressed, and as sent to a
    browser that accepts gzip."""
    _, _, html = _request(port, _get("/"))
    raw = sent = len(html)
    for asset in re.findall(rb'(?:href|src)="(/static/[^"]+\.(?:css|js))"', html):
        _, headers, body = _request(port, _get(asset.decode(), gzip_ok=True))
        sent += len(body)
        raw += len(gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body)
    return raw, sent


def _worker_pids(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(pid) for pid in children]


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` so far."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def _estimates(port: int, requests: list[bytes], latencies: list[float]) -> None:
    for raw in requests:
        start = time.perf_counter()
        status, _, _ = _request(port, raw)
        latencies.append((time.perf_counter() - start) * 1e3)
        if status != 200:
            raise RuntimeError(f"the estimate answered {status}")


def _load(port: int, bodies: list[list[bytes]]) -> list[float]:
    latencies: list[list[float]] = [[] for _ in bodies]
    threads = [
        threading.Thread(target=_estimates, args=(port, mine, out))
        for mine, out in zip(bodies, latencies, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(x for out in latencies for x in out)


def _pdf_loop(port: int, path: str, session: str, stop: threading.Event, count: list[int]) -> None:
    """Download the PDF until ``stop``; ``count`` holds the downloads served, then
    those answered 'being prepared' (202)."""
    while not stop.is_set():
        status, _, body = _request(port, _get(path, cookie=f"sessionid={session}"))
        if status == 202:
            count[1] += 1
            time.sleep(0.5)
            continue
        if status != 200 or not body.startswith(b"%PDF-"):
            raise RuntimeError(f"the PDF download answered {status}")
        count[0] += 1


def _wait_for_pdf(port: int, path: str, session: str, timeout_s: float = 120) -> None:
    """Wait until the worker has stored the quote's PDF (the download answers 200)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, _, _ = _request(port, _get(path, cookie=f"sessionid={session}"))
        if status == 200:
            return
        if status != 202:
            raise RuntimeError(f"the PDF download answered {status}")
        time.sleep(0.5)
    raise RuntimeError(f"the worker stored no PDF within {timeout_s:.0f} s")


def _p95(samples: list[float]) -> float:
    return samples[max(0, int(len(samples) * 0.95 + 0.5) - 1)]


class _Addresses:
    """Client addresses from 198.18.0.0/15 (RFC 2544), a random stretch per run, each
    handed out once."""

    def __init__(self) -> None:
        self._next = int(ipaddress.ip_address("198.18.0.0")) + secrets.randbelow(100_000)

    def take(self) -> str:
        self._next += 1
        return str(ipaddress.ip_address(self._next))


def _rate_limit_check(port: int, captured: CapturedRequest, addresses: _Addresses) -> str:
    """Send one client's estimates until the limit answers 429, then one from another
    client; what happened, for a result row."""
    one = addresses.take()
    for i in range(1, RATE_LIMIT_CHECK + 1):
        status, headers, _ = _request(
            port, captured.raw(port, users=90_000 + i, client_address=one)
        )
        if status == 429:
            other = captured.raw(port, users=95_000, client_address=addresses.take())
            served = _request(port, other)[0]
            return (
                f"429 (Retry-After {headers.get('retry-after', '-')} s) at request {i} "
                f"of one client; another client {served}"
            )
        if status != 200:
            raise RuntimeError(f"the estimate answered {status}")
    return f"no 429 in {RATE_LIMIT_CHECK} requests of one client"


def _cookie(captured: CapturedRequest) -> str:
    """The ``Cookie`` header the browser sent with the estimate (its CSRF cookie)."""
    return dict(captured.headers).get("cookie", "")


def _not_measured(why: str) -> list[Result]:
    return [Result("customer page", "live estimate in the production setup", why, "-", False)]


def run() -> list[Result]:
    chromium = chromium_path()
    if chromium is None:
        return _not_measured("not measured: Chromium not installed (apt-get install chromium)")
    with production_setup() as env:
        setup = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", SETUP],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        quote_pk, session = setup.stdout.decode().split()[-2:]
        with gunicorn(**server_settings(env)) as server:
            return _measure(server.port, server.pid, server.workers, chromium, quote_pk, session)


def _measure(
    port: int, master: int, workers: int, chromium: str, quote_pk: str, session: str
) -> list[Result]:
    raw_bytes, sent_bytes = _first_load_bytes(port)
    captured = capture_estimate(port, chromium)
    encoding = captured.content_type.split(";")[0]
    addresses = _Addresses()

    def bodies(offset: int) -> list[list[bytes]]:
        out = []
        for client in range(CLIENTS):
            address = addresses.take()
            out.append(
                [
                    captured.raw(
                        port,
                        users=100 + offset + client * REQUESTS_PER_CLIENT + i,
                        client_address=address,
                    )
                    for i in range(REQUESTS_PER_CLIENT)
                ]
            )
        return out

    _load(port, bodies(0))  # warm-up of every worker (imports, caches), not measured
    pids = _worker_pids(master)
    page_requests = 200
    page = _get("/", cookie=_cookie(captured), client=addresses.take())
    before = _cpu_s(pids)
    for _ in range(page_requests):
        _request(port, page)
    page_cpu_ms = (_cpu_s(pids) - before) * 1e3 / page_requests

    measured = bodies(10_000)
    before = _cpu_s(pids)
    alone = _load(port, measured)
    estimate_cpu_ms = (_cpu_s(pids) - before) * 1e3 / len(alone)

    stop, downloads = threading.Event(), [0, 0]
    pdf_path = f"/presales/quotes/{quote_pk}/pdf/"
    _wait_for_pdf(port, pdf_path, session)  # the worker renders it when the quote is made
    presales = threading.Thread(target=_pdf_loop, args=(port, pdf_path, session, stop, downloads))
    presales.start()
    try:
        with_pdf = _load(port, bodies(20_000))
    finally:
        stop.set()
        presales.join()
    limits = _rate_limit_check(port, captured, addresses)
    n = len(alone)
    setup = f"production setup, the browser's request ({encoding})"
    return [
        Result(
            "customer page",
            f"live estimate ({setup}), worker CPU per request, {n} requests",
            f"{estimate_cpu_ms:.2f} ms",
            "<= 4 ms",
            estimate_cpu_ms <= 4,
        ),
        Result(
            "customer page",
            f"live estimate ({setup}), {CLIENTS} concurrent clients, {workers} worker "
            "processes (median / p95)",
            f"{statistics.median(alone):.1f} ms / {_p95(alone):.1f} ms",
            "p95 <= 100 ms",
            _p95(alone) <= 100,
        ),
        Result(
            "customer page",
            f"live estimate ({setup}), {CLIENTS} concurrent clients while presales download "
            "a quote PDF in a loop (median / p95)",
            f"{statistics.median(with_pdf):.1f} ms / {_p95(with_pdf):.1f} ms "
            f"({downloads[0]} downloads)",
            "p95 <= 100 ms",
            _p95(with_pdf) <= 100,
        ),
        Result(
            "customer page",
            "live estimate, rate limit of one client address behind the proxy (120/m)",
            limits,
            "429 by request 240, other client 200",
            limits.startswith("429") and limits.endswith("200"),
        ),
        Result(
            "customer page",
            "`GET /` (production setup), worker CPU per request",
            f"{page_cpu_ms:.2f} ms",
            "<= 5 ms",
            page_cpu_ms <= 5,
        ),
        Result(
            "customer page",
            "first load: HTML + CSS + JS, uncompressed / as sent (gzip)",
            f"{raw_bytes / 1000:.1f} KB / {sent_bytes / 1000:.1f} KB",
            "< 100 KB uncompressed",
            raw_bytes < 100_000,
        ),
    ]
