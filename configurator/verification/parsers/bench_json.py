"""``vllm bench serve --save-result`` JSON (keys of ``vllm/benchmarks/serve.py``).

Read: ``model_id``, ``backend``, ``max_concurrency``, ``mean_ttft_ms``, ``median_ttft_ms``,
``p99_ttft_ms``, ``output_throughput`` (tokens/s), ``request_throughput`` (requests/s),
and the ``--metadata key=value`` pairs the tool stores at the top level (``gpu``,
``gpu_count``, ``vllm_version``, ``tensor_parallel_size``, ``max_model_len``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from configurator.verification.parsers.base import ParsedBenchmark, ParseError, require

FIGURES = {
    "mean_ttft_ms": "ttft_mean_ms",
    "median_ttft_ms": "ttft_median_ms",
    "p99_ttft_ms": "ttft_p99_ms",
    "output_throughput": "output_throughput_tok_s",
    "request_throughput": "request_throughput_req_s",
}
INTS = {
    "gpu_count": "gpu_count",
    "tensor_parallel_size": "tensor_parallel_size",
    "max_model_len": "max_model_len",
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def parse_bench_json(text: str, **defaults: object) -> ParsedBenchmark:
    """Parse one ``vllm bench serve`` result file.

    Args:
        text: the JSON text.
        defaults: fields the file does not hold (``gpu_type``, ``engine_version``).

    Raises:
        ParseError: invalid JSON, not an object, or no model, GPU, TTFT or throughput.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not valid JSON: {exc}", missing=("format",)) from None
    if not isinstance(data, dict):
        raise ParseError("the benchmark result must be a JSON object", missing=("format",))
    found: dict[str, Any] = {}
    for key, target in FIGURES.items():
        number = _number(data.get(key))
        if number is not None:
            found[target] = number
    for key, target in INTS.items():
        number = _number(data.get(key))
        if number is not None and number == int(number) and 0 < number < 1e9:
            found[target] = int(number)
    model = data.get("model_id") or data.get("model")
    gpu = data.get("gpu") or data.get("gpu_type")
    version = data.get("vllm_version") or data.get("engine_version")
    concurrency = _number(data.get("max_concurrency"))
    record = ParsedBenchmark(
        kind="vllm_bench_json",
        engine="vllm",
        engine_version=str(version)[:60] if isinstance(version, str | int | float) else None,
        model_id=str(model)[:200] if isinstance(model, str) and model else None,
        gpu_type=str(gpu)[:200] if isinstance(gpu, str) and gpu else None,
        extra={"max_concurrency_clients": concurrency} if concurrency is not None else {},
        **found,
    ).with_defaults(**defaults)
    if not any(getattr(record, f) is not None for f in FIGURES.values()):
        raise ParseError(
            "benchmark result: missing TTFT and throughput (mean_ttft_ms, output_throughput)",
            missing=("ttft_mean_ms", "output_throughput_tok_s"),
        )
    return require(record, ("model_id", "gpu_type"), "benchmark result")
