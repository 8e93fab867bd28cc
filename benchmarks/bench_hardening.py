"""Hostile load and hostile inputs against the production shape (gunicorn on 127.0.0.1).

1. A stalled Hub: 4 clients post estimates for ever new unknown model ids while the
   Hub (``tests/hubserver``, ``stall=True``) accepts connections and never answers;
   16 other clients post the seed estimate. Before the lookups moved off the request
   path each unknown id held a worker for the 10 s Hub deadline (QA report: 4 such
   clients cut 46 others from 60 to 3 requests/s, median 20.5 s). Distinct clients
   are told apart by ``X-Forwarded-For`` from a trusted proxy (127.0.0.1), with the
   default rate limits on.
2. Hostile inputs: each case of the hardening report posted once; none may answer 5xx.

Bounded: 12 s of load, one request per hostile case.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
import urllib.parse
import uuid

from benchmarks.bench_estimate import SEED as SEED_FORM
from benchmarks.run import Result
from benchmarks.server import gunicorn
from tests.hubserver.server import serve

LOAD_SECONDS = 12.0
ATTACKERS = 4
CUSTOMERS = 16


def _headers(token: str, client: str, content_type: str) -> dict[str, str]:
    return {
        "Content-Type": content_type,
        "HX-Request": "true",
        "X-CSRFToken": token,
        "Cookie": f"csrftoken={token}",
        "Accept-Language": "en",
        "X-Forwarded-For": client,
    }


def _post(conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict[str, str]) -> int:
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status


def _load(port: int, token: str) -> dict[str, list[float] | list[int]]:
    stop = time.monotonic() + LOAD_SECONDS
    customer_ms: list[float] = []
    attacker_statuses: list[int] = []
    lock = threading.Lock()
    form = "application/x-www-form-urlencoded"

    def customer(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = _headers(token, f"198.51.100.{n + 1}", form)
        body = urllib.parse.urlencode(SEED_FORM).encode()
        mine = []
        while time.monotonic() < stop:
            start = time.perf_counter()
            status = _post(conn, "/estimate/", body, headers)
            if status == 200:
                mine.append((time.perf_counter() - start) * 1e3)
        with lock:
            customer_ms.extend(mine)

    def attacker(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = _headers(token, f"203.0.113.{n + 1}", form)
        mine = []
        while time.monotonic() < stop:
            model = f"attacker{n}/m-{uuid.uuid4().hex[:12]}"
            body = urllib.parse.urlencode({**SEED_FORM, "model": model}).encode()
            mine.append(_post(conn, "/estimate/", body, headers))
        with lock:
            attacker_statuses.extend(mine)

    threads = [threading.Thread(target=customer, args=(n,)) for n in range(CUSTOMERS)]
    threads += [threading.Thread(target=attacker, args=(n,)) for n in range(ATTACKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"customer_ms": customer_ms, "attacker_statuses": attacker_statuses}


def _hostile_cases() -> list[tuple[str, str, bytes, str]]:
    """(name, path, body, content type) of each hostile request."""
    qwen = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 12288,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "torch_dtype": "bfloat16",
    }
    boundary = "hardeningboundary"

    def upload(raw: bytes) -> bytes:
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
            for k, v in {**SEED_FORM, "model": ""}.items()
        ]
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="config_file"; '
            f'filename="config.json"\r\nContent-Type: application/json\r\n\r\n'.encode()
            + raw
            + b"\r\n"
        )
        return b"".join(parts) + f"--{boundary}--\r\n".encode()

    multipart = f"multipart/form-data; boundary={boundary}"
    form = "application/x-www-form-urlencoded"
    cases = []
    for layers in (10**6, 10**7):
        raw = json.dumps({**qwen, "num_hidden_layers": layers}).encode()
        cases.append((f"config with {layers:,} layers", "/estimate/", upload(raw), multipart))
    cases.append(("JSON nested 100,000 deep", "/estimate/", upload(b"[" * 100_000), multipart))
    big = b'{"vocab_size": ' + b"9" * 5000 + b"}"
    cases.append(("5,000-digit integer", "/estimate/", upload(big), multipart))
    cases.append(("2 MB body", "/estimate/", upload(b" " * 2_000_000), multipart))
    for bad in ("owner--x/model", "owner/model.git", "a" * 100_000):
        name = f"model id {bad[:20]}{'…' if len(bad) > 20 else ''}"
        body = urllib.parse.urlencode({**SEED_FORM, "model": bad}).encode()
        cases.append((name, "/estimate/", body, form))
        api = json.dumps({"model": bad, "context": 8192, "users": 10}).encode()
        cases.append((f"API {name}", "/api/plans", api, "application/json"))
    deep = b'{"model": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    cases.append(("API body nested 50,000 deep", "/api/plans", deep, "application/json"))
    return cases


def _hostile(port: int, token: str) -> tuple[dict[int, int], float]:
    statuses: dict[int, int] = {}
    slowest_ms = 0.0
    for index, (_name, path, body, content_type) in enumerate(_hostile_cases()):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        start = time.perf_counter()
        status = _post(conn, path, body, _headers(token, f"192.0.2.{index + 1}", content_type))
        slowest_ms = max(slowest_ms, (time.perf_counter() - start) * 1e3)
        conn.close()
        statuses[status] = statuses.get(status, 0) + 1
    return statuses, slowest_ms


def run() -> list[Result]:
    with (
        serve(stall=True) as hub,
        gunicorn(
            HF_HUB_OFFLINE="false",
            HF_ENDPOINT=hub.url,
            RATE_LIMITS_ENABLED="true",
            DJANGO_TRUSTED_PROXIES="127.0.0.1",
        ) as server,
    ):
        load = _load(server.port, server.csrf_token)
        statuses, slowest_ms = _hostile(server.port, server.csrf_token)
    customer_ms = sorted(float(x) for x in load["customer_ms"])
    attacker = [int(x) for x in load["attacker_statuses"]]
    rate = len(customer_ms) / LOAD_SECONDS
    median = statistics.median(customer_ms) if customer_ms else float("inf")
    p95 = customer_ms[int(len(customer_ms) * 0.95) - 1] if customer_ms else float("inf")
    answered = {code: attacker.count(code) for code in sorted(set(attacker))}
    server_errors = sum(n for code, n in statuses.items() if code >= 500)
    return [
        Result(
            "hardening",
            f"stalled Hub: {CUSTOMERS} customers' seed estimates while {ATTACKERS} clients "
            f"post new unknown ids for {LOAD_SECONDS:g} s, {server.workers} workers "
            "(requests/s, median / p95)",
            f"{rate:.0f}/s, {median:.0f} ms / {p95:.0f} ms",
            "median < 1 s (before: 3/s, median 20.5 s)",
            median < 1000,
        ),
        Result(
            "hardening",
            "stalled Hub: the attackers' answers by status (200 looking up, 429 limited)",
            ", ".join(f"{n} × {code}" for code, n in answered.items()),
            "no 5xx",
            all(code < 500 for code in answered),
        ),
        Result(
            "hardening",
            f"{sum(statuses.values())} hostile requests (config counts, nesting, long "
            "numbers, bad ids, 2 MB body): answers by status, slowest",
            ", ".join(f"{n} × {code}" for code, n in sorted(statuses.items()))
            + f"; {slowest_ms:.0f} ms",
            "no 5xx",
            server_errors == 0,
        ),
    ]
