"""Live-estimate latency under 20 concurrent clients, and the page's first-load weight.

Targets (issue 5): the estimate endpoint answers in under 50 ms at the 95th percentile
with 20 concurrent clients on a 2-core machine; the first load (HTML, CSS and JavaScript)
stays under 100 KB. The server runs as in production (``docs/operations.md``): gunicorn
on 127.0.0.1 with one sync worker per CPU core, static files from WhiteNoise. Clients
are threads using ``http.client`` on the same machine.
"""

from __future__ import annotations

import http.client
import re
import statistics
import threading
import time
import urllib.parse

from benchmarks.run import Result
from benchmarks.server import get as _get
from benchmarks.server import gunicorn

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
    with gunicorn() as server:
        port, token, workers = server.port, server.csrf_token, server.workers
        page_bytes = _first_load_bytes(port)
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
