"""How long the parallelism search takes in its longest cases (target: under 5 ms a plan).

Cases: pipeline stages over two nodes (DeepSeek-V3 on 8 × H100), the full search over
eight nodes that ends in "weights do not fit" (DeepSeek-V3 on one L4 per node), expert
parallel with a shared system prompt (Qwen3-30B-A3B on 4 × L40S).
"""

from __future__ import annotations

import contextlib
import statistics
import time

from benchmarks.run import Result
from sizing.errors import InfeasibleError
from sizing.model import from_catalog
from sizing.plan import PlanRequest, make_plan


def _time(request: PlanRequest) -> tuple[float, float]:
    def once() -> None:
        with contextlib.suppress(InfeasibleError):
            make_plan(request)

    once()
    samples = []
    for _ in range(200):
        start = time.perf_counter()
        once()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples), sorted(samples)[int(len(samples) * 0.95)]


def run() -> list[Result]:
    deepseek = from_catalog("deepseek-ai/DeepSeek-V3")
    cases = {
        "PP over 2 nodes, DeepSeek-V3 on 8 × H100": PlanRequest(
            model=deepseek,
            context_tokens=8192,
            users=1000,
            gpu_slug="h100-sxm",
            gpus_per_node=8,
            kv_dtype="auto",
        ),
        "no layout over 8 nodes, DeepSeek-V3 on 1 × L4": PlanRequest(
            model=deepseek,
            context_tokens=8192,
            users=10,
            gpu_slug="l4",
            gpus_per_node=1,
        ),
        "EP 4 and a shared prompt, Qwen3-30B-A3B on 4 × L40S": PlanRequest(
            model=from_catalog("Qwen/Qwen3-30B-A3B"),
            context_tokens=8192,
            users=1000,
            gpu_slug="l40s",
            gpus_per_node=4,
            expert_parallel=True,
            shared_prompt_tokens=2048,
            active_share=0.3,
        ),
    }
    results = []
    for label, request in cases.items():
        median, p95 = _time(request)
        results.append(
            Result(
                "parallelism",
                f"{label} (median / p95)",
                f"{median:.3f} ms / {p95:.3f} ms",
                "< 5 ms",
                p95 < 5,
            )
        )
    return results
