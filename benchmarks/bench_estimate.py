"""The customer page under load: the live estimate as the page sends it, and ``GET /``.

The server runs as in production (``docs/operations.md``): gunicorn on 127.0.0.1 with one
sync worker per CPU core, static files collected (hashed, compressed) and served by
WhiteNoise, a throw-away SQLite database. Each request is the one the page sends while a
customer types: the whole form url-encoded, with the controls read from the
page (:mod:`benchmarks.page_form`), with ``HX-Request`` and the CSRF cookie and header.
The number of users differs from request to request, as when typing, so no request
repeats an earlier one.

Figures:

- CPU per request in the workers: the workers' user + system CPU time
  (``/proc/<pid>/stat``) over the measured requests, divided by their number (target:
  at most 2.5 ms for the estimate, 5 ms for ``GET /``). CPU time is what the shared
  machine cannot inflate by scheduling other work; the clients' own CPU is not counted.
- latency at 20 concurrent clients (median / p95, target p95 at most 50 ms), alone and
  while one presales user downloads a quote PDF in a loop (the four-alternative draft
  made from an inquiry; the first download renders it, the rest are served from the
  store, see ``configurator.quotes.pdf_cache``).
- the first load's weight: HTML, CSS and JavaScript, as sent compressed and uncompressed.
"""

from __future__ import annotations

import gzip
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.page_form import form_controls, urlencoded_body
from benchmarks.run import Result
from benchmarks.server import gunicorn

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = 20
REQUESTS_PER_CLIENT = 50
TYPED = {"model": "Qwen/Qwen3-32B-FP8", "context_tokens": "8192"}
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


def _get(path: str, *, cookie: str = "", gzip_ok: bool = False) -> bytes:
    extra = f"Cookie: {cookie}\r\n" if cookie else ""
    extra += "Accept-Encoding: gzip\r\n" if gzip_ok else ""
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Language: de\r\n{extra}"
        "Connection: close\r\n\r\n"
    ).encode()


def _post(path: str, body: bytes, content_type: str, token: str) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Language: de\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        f"HX-Request: true\r\nX-CSRFToken: {token}\r\nCookie: csrftoken={token}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


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
    while not stop.is_set():
        status, _, body = _request(port, _get(path, cookie=f"sessionid={session}"))
        if status != 200 or not body.startswith(b"%PDF-"):
            raise RuntimeError(f"the PDF download answered {status}")
        count[0] += 1


def _p95(samples: list[float]) -> float:
    return samples[max(0, int(len(samples) * 0.95 + 0.5) - 1)]


def run() -> list[Result]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-estimate-"))
    env = {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "HF_HUB_OFFLINE": "true",
        "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
        "DJANGO_STATIC_ROOT": str(tmp / "static"),
    }
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-key-not-for-production-use-0123456789")
    manage = [sys.executable, "manage.py"]
    quiet = {"cwd": ROOT, "env": env, "check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], **quiet)  # type: ignore[call-overload]
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], **quiet)  # type: ignore[call-overload]
    setup = subprocess.run(
        [*manage, "shell", "-c", SETUP], cwd=ROOT, env=env, check=True, capture_output=True
    )
    quote_pk, session = setup.stdout.decode().split()[-2:]
    server_env = {k: env[k] for k in ("DATABASE_URL", "DJANGO_STATIC_ROOT")}
    with gunicorn(**server_env) as server:
        port, token, workers = server.port, server.csrf_token, server.workers
        raw_bytes, sent_bytes = _first_load_bytes(port)
        _, _, html = _request(port, _get("/", cookie=f"csrftoken={token}"))
        controls = form_controls(html.decode())

        def bodies(offset: int) -> list[list[bytes]]:
            out = []
            for client in range(CLIENTS):
                mine = []
                for i in range(REQUESTS_PER_CLIENT):
                    users = str(100 + offset + client * REQUESTS_PER_CLIENT + i)
                    body, ctype = urlencoded_body(controls, {**TYPED, "users": users})
                    mine.append(_post("/estimate/", body, ctype, token))
                out.append(mine)
            return out

        _load(port, bodies(0))  # warm-up of every worker (imports, caches), not measured
        pids = _worker_pids(server.pid)
        page_requests = 200
        before = _cpu_s(pids)
        for _ in range(page_requests):
            _request(port, _get("/", cookie=f"csrftoken={token}"))
        page_cpu_ms = (_cpu_s(pids) - before) * 1e3 / page_requests

        measured = bodies(10_000)
        before = _cpu_s(pids)
        alone = _load(port, measured)
        estimate_cpu_ms = (_cpu_s(pids) - before) * 1e3 / len(alone)

        stop, downloads = threading.Event(), [0]
        pdf_path = f"/presales/quotes/{quote_pk}/pdf/"
        _request(port, _get(pdf_path, cookie=f"sessionid={session}"))  # renders and stores it
        presales = threading.Thread(
            target=_pdf_loop, args=(port, pdf_path, session, stop, downloads)
        )
        presales.start()
        try:
            with_pdf = _load(port, bodies(20_000))
        finally:
            stop.set()
            presales.join()
    n = len(alone)
    return [
        Result(
            "customer page",
            f"live estimate (url-encoded, as the page sends it), worker CPU per request, "
            f"{n} requests",
            f"{estimate_cpu_ms:.2f} ms",
            "<= 2.5 ms",
            estimate_cpu_ms <= 2.5,
        ),
        Result(
            "customer page",
            f"live estimate, {CLIENTS} concurrent clients, {workers} worker processes "
            "(median / p95)",
            f"{statistics.median(alone):.1f} ms / {_p95(alone):.1f} ms",
            "p95 <= 50 ms",
            _p95(alone) <= 50,
        ),
        Result(
            "customer page",
            f"live estimate, {CLIENTS} concurrent clients while presales download a quote PDF "
            "in a loop (median / p95)",
            f"{statistics.median(with_pdf):.1f} ms / {_p95(with_pdf):.1f} ms "
            f"({downloads[0]} downloads)",
            "p95 <= 50 ms",
            _p95(with_pdf) <= 50,
        ),
        Result(
            "customer page",
            "`GET /`, worker CPU per request",
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
