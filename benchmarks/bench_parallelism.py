"""How long the parallelism search takes in its longest cases (target: under 5 ms a plan).

Cases: pipeline stages over six nodes (Llama-3.1-405B on 4 × L40S, the longest search
that finds a layout), pipeline stages over two nodes (DeepSeek-V3 on 8 × H100), the full search over
eight nodes that ends in "weights do not fit" (DeepSeek-V3 on one L4 per node), expert
parallel with a shared system prompt (Qwen3-30B-A3B on 4 × L40S).
"""

from __future__ import annotations

import contextlib
from typing import Any

from benchmarks.run import Result
from benchmarks.timing import Samples, cpu_samples
from sizing.errors import InfeasibleError
from sizing.model.spec import ModelSpec, from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import Workload


def _time(request: PlanRequest) -> Samples:
    def once() -> None:
        with contextlib.suppress(InfeasibleError):
            make_plan(request)

    return cpu_samples(once, 200)


def _request(model: ModelSpec, **fields: Any) -> PlanRequest:
    return PlanRequest(model=model, workload=Workload(model=model.repo_id, **fields))


def run() -> list[Result]:
    deepseek = from_catalog("deepseek-ai/DeepSeek-V3")
    cases = {
        "PP over 6 nodes, Llama-3.1-405B on 4 × L40S": _request(
            from_catalog("meta-llama/Llama-3.1-405B-Instruct"),
            context_tokens=8192,
            users=100,
            gpu="l40s",
            gpus_per_node=4,
        ),
        "PP over 2 nodes, DeepSeek-V3 on 8 × H100": _request(
            deepseek,
            context_tokens=8192,
            users=1000,
            gpu="h100-sxm",
            gpus_per_node=8,
            kv_dtype="auto",
        ),
        "no layout over 8 nodes, DeepSeek-V3 on 1 × L4": _request(
            deepseek,
            context_tokens=8192,
            users=10,
            gpu="l4",
            gpus_per_node=1,
        ),
        "EP 4 and a shared prompt, Qwen3-30B-A3B on 4 × L40S": _request(
            from_catalog("Qwen/Qwen3-30B-A3B"),
            context_tokens=8192,
            users=1000,
            gpu="l40s",
            gpus_per_node=4,
            expert_parallel=True,
            shared_prompt_tokens=2048,
            active_share=0.3,
        ),
    }
    results = []
    for label, request in cases.items():
        samples = _time(request)
        results.append(
            Result(
                "parallelism",
                f"{label}, CPU (median / p95)",
                samples.text(),
                "< 5 ms",
                samples.p95 < 5,
            )
        )
    return results
