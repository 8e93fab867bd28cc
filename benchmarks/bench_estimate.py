"""Live-estimate latency under 20 concurrent clients, and the page's first-load weight.

Targets (issue 5): the estimate endpoint answers in under 50 ms at the 95th percentile
with 20 concurrent clients on a 2-core machine; the first load (HTML, CSS and JavaScript)
stays under 100 KB. The server runs as in production (``docs/operations.md``): gunicorn
on 127.0.0.1 with one sync worker per CPU core, static files from WhiteNoise. Clients
are threads using ``http.client`` on the same machine.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from benchmarks.run import Result

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = 20
REQUESTS_PER_CLIENT = 50
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_up(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the benchmark server exited at start-up")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the benchmark server did not start within 30 s")


def _get(port: int, path: str) -> tuple[bytes, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Accept-Language": "de"})
    response = conn.getresponse()
    body = response.read()
    headers = {k.lower(): v for k, v in response.getheaders()}
    conn.close()
    return body, headers


def _first_load_bytes(port: int) -> int:
    """Bytes of the page and of its stylesheets and scripts, uncompressed."""
    html, _ = _get(port, "/")
    assets = re.findall(rb'(?:href|src)="(/static/[^"]+\.(?:css|js))"', html)
    total = len(html)
    for asset in assets:
        body, _ = _get(port, asset.decode())
        total += len(body)
    return total


def _client(port: int, token: str, samples: list[float], lock: threading.Lock) -> None:
    body = urllib.parse.urlencode(SEED)
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "HX-Request": "true",
        "X-CSRFToken": token,
        "Cookie": f"csrftoken={token}",
        "Accept-Language": "de",
    }
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    mine = []
    for _ in range(REQUESTS_PER_CLIENT):
        start = time.perf_counter()
        conn.request("POST", "/estimate/", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"estimate answered {response.status}")
        mine.append((time.perf_counter() - start) * 1e3)
    conn.close()
    with lock:
        samples.extend(mine)


def run() -> list[Result]:
    port = _free_port()
    env = {**os.environ, "DJANGO_DEBUG": "false", "HF_HUB_OFFLINE": "true"}
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-key-not-for-production-use-0123456789")
    workers = os.cpu_count() or 1
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "configurator.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_until_up(port, proc)
        page_bytes = _first_load_bytes(port)
        _, headers = _get(port, "/")
        token_match = re.search(r"csrftoken=([^;]+)", headers.get("set-cookie", ""))
        if not token_match:
            raise RuntimeError("the page set no CSRF cookie")
        token = token_match.group(1)
        samples: list[float] = []
        lock = threading.Lock()
        # Warm-up of every worker process (imports, catalog caches), not measured.
        warm = [
            threading.Thread(target=_client, args=(port, token, [], lock)) for _ in range(CLIENTS)
        ]
        for t in warm:
            t.start()
        for t in warm:
            t.join()
        threads = [
            threading.Thread(target=_client, args=(port, token, samples, lock))
            for _ in range(CLIENTS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and the workers it forked
        proc.wait(timeout=10)
    samples.sort()
    p95 = samples[int(len(samples) * 0.95) - 1]
    median = statistics.median(samples)
    return [
        Result(
            "customer page",
            f"live estimate, {CLIENTS} concurrent clients, {len(samples)} requests, "
            f"{workers} worker processes (median / p95)",
            f"{median:.1f} ms / {p95:.1f} ms",
            "p95 < 50 ms",
            p95 < 50,
        ),
        Result(
            "customer page",
            "first load: HTML + CSS + JS, uncompressed",
            f"{page_bytes / 1000:.1f} KB",
            "< 100 KB",
            page_bytes < 100_000,
        ),
    ]
