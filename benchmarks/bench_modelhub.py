"""Model lookup: a cached lookup (target under 5 ms) and the longest wait on a hanging Hub
(target: a page never waits more than HF_TIMEOUT_SECONDS = 10 s).

Runs against a throw-away test database and the recorded local Hub of the test suite
(``tests/hubserver``), so it needs no network and leaves no rows behind.
"""

from __future__ import annotations

import statistics
import time

from django.conf import settings
from django.db import connection
from django.test.utils import override_settings

from benchmarks.run import Result
from configurator.modelhub.services import model_lookup
from tests.hubserver.server import serve

SAMPLES = 500


def _timed_ms(repo_id: str, revision: str | None = None) -> list[float]:
    samples = []
    for _ in range(SAMPLES):
        start = time.process_time()  # CPU time: the machine is shared (benchmarks.timing)
        model_lookup(repo_id, revision=revision)
        samples.append((time.process_time() - start) * 1e3)
    return samples


def _stats(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), sorted(samples)[int(len(samples) * 0.95)]


def run() -> list[Result]:
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0)
    try:
        with serve() as hub, override_settings(HF_ENDPOINT=hub.url, HF_HUB_OFFLINE=False):
            model_lookup("Qwen/Qwen3-8B-FP8")  # fills the cache from the recorded Hub
            hub.requests.clear()
            cached = _stats(_timed_ms("Qwen/Qwen3-8B-FP8"))
            catalog = _stats(_timed_ms("Qwen/Qwen3-32B-FP8"))
            assert not hub.requests, "a cached lookup contacted the Hub"
        deadline_s = float(settings.HF_TIMEOUT_SECONDS)
        with serve(stall=True) as stalled, override_settings(HF_ENDPOINT=stalled.url):
            start = time.perf_counter()
            resolved = model_lookup("Qwen/Qwen3-32B-FP8", revision="main")
            waited_s = time.perf_counter() - start
        fell_back = resolved.origin == "catalog" and bool(resolved.notice)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return [
        Result(
            "modelhub",
            "cached Hub model lookup, CPU (median / p95)",
            f"{cached[0]:.3f} ms / {cached[1]:.3f} ms",
            "< 5 ms",
            cached[1] < 5,
        ),
        Result(
            "modelhub",
            "catalog model lookup, CPU (median / p95)",
            f"{catalog[0]:.3f} ms / {catalog[1]:.3f} ms",
            "< 5 ms",
            catalog[1] < 5,
        ),
        Result(
            "modelhub",
            "lookup against a Hub that never answers, until the catalog fallback",
            f"{waited_s:.2f} s",
            f"<= {deadline_s:g} s (HF_TIMEOUT_SECONDS) + 0.1 s",
            fell_back and waited_s <= deadline_s + 0.1,
        ),
    ]
