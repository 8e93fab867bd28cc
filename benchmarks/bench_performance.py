"""How much CPU one performance-model evaluation takes (target: ≤ 0.2 ms in-process).

The recommender and the traffic model evaluate thousands of candidates, each asking
for a TTFT or a throughput; the model shape is built once per model and reused.
"""

from __future__ import annotations

from benchmarks.run import Result
from benchmarks.timing import cpu_samples
from sizing.model.spec import from_catalog
from sizing.performance import decode, model_shape, returning_user, ttft_hit


def run() -> list[Result]:
    shape = model_shape(from_catalog("Qwen/Qwen3-32B-FP8"), "fp8")
    seed = {"gpu": "rtx-pro-6000-se", "tp": 1}
    cases = [
        (
            "one TTFT of a CPU-tier hit, seed example",
            lambda: ttft_hit(
                shape, engine="vllm", tier="cpu", prompt_tokens=8192, cached_tokens=7908, **seed
            ),
        ),
        (
            "one returning user (miss + 4 tiers), seed example",
            lambda: returning_user(shape, engine="vllm", context_tokens=8192, **seed),
        ),
        (
            "one decode step (TPOT, tokens/s per GPU), batch 64",
            lambda: decode(shape, batch=64, context_tokens=8192, **seed),
        ),
    ]
    out = []
    for figure, fn in cases:
        samples = cpu_samples(fn, 2000)
        out.append(
            Result(
                "performance",
                f"{figure}, CPU (median / p95)",
                samples.text(),
                "<= 0.2 ms",
                samples.p95 <= 0.2,
            )
        )
    return out
