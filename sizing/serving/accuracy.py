"""Accuracy of the traffic model on published multi-turn measurements.

A case (JSON object) names a setup and one measured figure:

``id``, ``model_id``, ``gpu`` (catalog slug), ``gpu_count``, ``tensor_parallel_size``,
``replicas``, ``engine``, ``kv_cache_dtype``, ``cpu_tier_gib_per_replica`` (0 for none),
``workload`` {``clients``, ``turns``, ``prompt_tokens_per_turn``, ``output_tokens_per_turn``,
``shared_prefix_tokens``, ``request_rate_per_s`` or ``max_concurrency``, and optionally
``gap_median_s`` and ``gap_p90_s`` (the time between a conversation's turns; default the
``chat`` profile) or ``cpu_hit_rate`` (a cache pre-warmed to that share of hits)},
``metric``, ``measured``, ``source``, and optionally ``split`` (``fit`` or ``held_out``).

Metrics and how they are predicted:

- ``cpu_hit_rate``: share of prompt tokens served from the CPU tier or the GPU cache
  above it (for a simulated single cache, its token hit rate): :mod:`sizing.traffic.hit_rate`
  with the tier of ``cpu_tier_gib_per_replica`` per replica and the workload's stream.
- ``throughput_ratio_offload_vs_base``: prefill throughput with the tier against without
  it, for a replica kept busy: the ratio of the mean per-request service time without and
  with hits (:mod:`sizing.serving.load`, times from :mod:`sizing.performance`), the shape
  ``T(h) = 1 / ((1 − h)/P + h/L)`` of docs/sizing.md §10
- ``mean_ttft_ratio_offload_vs_base``: mean TTFT with the tier against without it at the
  workload's rate (M/G/1 mean wait included).

Errors: ``abs_error_pct = |predicted / measured − 1| × 100``; the summary has the
median, p90 and max and the count evaluated, over all cases and per split.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from sizing import performance
from sizing.errors import SizingError
from sizing.hardware import catalog
from sizing.model.architecture import kv_bytes_per_token
from sizing.model.spec import from_catalog
from sizing.serving.load import replica_load
from sizing.serving.service_times import ServiceTable, service_table
from sizing.traffic.hit_rate import ConversationShape, ReferenceStream, TierHits, hit_rates
from sizing.traffic.return_gaps import DEFAULT_PROFILE, PROFILES, GapDistribution
from sizing.units import GIB

METRICS = (
    "cpu_hit_rate",
    "throughput_ratio_offload_vs_base",
    "mean_ttft_ratio_offload_vs_base",
)
"""Metrics a case may measure."""

REQUIRED = (
    "id",
    "model_id",
    "gpu",
    "gpu_count",
    "tensor_parallel_size",
    "replicas",
    "engine",
    "kv_cache_dtype",
    "cpu_tier_gib_per_replica",
    "workload",
    "metric",
    "measured",
    "source",
)
"""Keys every case has."""


class CaseError(ValueError):
    """A case that cannot be evaluated, with the case id and the reason."""


@dataclass(frozen=True)
class TrafficResult:
    """One case's prediction.

    Attributes:
        case_id: the case's ``id``.
        metric: its metric.
        split: ``fit`` or ``held_out``.
        predicted: the prediction.
        measured: the measurement.
        source: where the measurement comes from.
    """

    case_id: str
    metric: str
    split: str
    predicted: float
    measured: float
    source: str

    @property
    def abs_error_pct(self) -> float:
        """``|predicted / measured − 1| × 100``."""
        return abs(self.predicted / self.measured - 1) * 100


def _number(case: dict[str, Any], where: dict[str, Any], key: str, low: float = 0) -> float:
    value = where.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise CaseError(f"case {case.get('id')!r}: {key} must be a number, got {value!r}")
    if value < low:
        raise CaseError(f"case {case.get('id')!r}: {key} must be at least {low}, got {value!r}")
    return float(value)


def _gaps(case: dict[str, Any], work: dict[str, Any]) -> GapDistribution:
    if "gap_median_s" in work or "gap_p90_s" in work:
        try:
            return GapDistribution(
                _number(case, work, "gap_median_s"), _number(case, work, "gap_p90_s")
            )
        except ValueError as exc:
            raise CaseError(f"case {case.get('id')!r}: {exc}") from None
    return PROFILES[DEFAULT_PROFILE]


def _stream(
    case: dict[str, Any], work: dict[str, Any], shape: ConversationShape
) -> ReferenceStream:
    """The stream one replica sees: the workload's rate (or a closed loop of
    ``max_concurrency`` clients, each sending its next turn a gap after the last)."""
    gaps = _gaps(case, work)
    replicas = _number(case, case, "replicas", 1)
    if "request_rate_per_s" in work:
        rate = _number(case, work, "request_rate_per_s")
    elif "max_concurrency" in work:
        rate = _number(case, work, "max_concurrency", 1) / gaps.mean_s
    else:
        raise CaseError(f"case {case.get('id')!r}: give request_rate_per_s or max_concurrency")
    return ReferenceStream(rate / replicas / shape.turns, shape, gaps)


def _table(case: dict[str, Any], shape: ConversationShape, prefix: int) -> ServiceTable:
    model = from_catalog(str(case["model_id"]))
    mshape = performance.model_shape(model, str(case["kv_cache_dtype"]))
    gpu, tp, engine = str(case["gpu"]), int(case["tensor_parallel_size"]), str(case["engine"])

    def miss_ms(prompt: int) -> float:
        return performance.ttft_miss_ms(mshape, gpu=gpu, tp=tp, prompt_tokens=prompt)

    def hit_ms(tier: str, prompt: int, cached: int) -> float | None:
        if tier not in ("gpu", "cpu"):
            return None
        return performance.ttft_hit_ms(
            mshape,
            engine=engine,
            tier=tier,
            gpu=gpu,
            tp=tp,
            prompt_tokens=prompt,
            cached_tokens=min(cached, prompt - 1),
        )

    return service_table(shape=shape, shared_prefix_tokens=prefix, miss_ms=miss_ms, hit_ms=hit_ms)


def _prewarmed(case: dict[str, Any], shape: ConversationShape, h: float) -> float:
    """Throughput ratio for a batch of independent prompts of ``prompt_tokens_per_turn``
    of which a share ``h`` is found whole in a pre-warmed CPU tier: ``T(h)/T(0)`` with
    ``T(h) = 1 / ((1 − h)/P + h/L)``, ``P`` and ``L`` the prefill and reload rates."""
    if case["metric"] != "throughput_ratio_offload_vs_base":
        raise CaseError(
            f"case {case['id']!r}: a pre-warmed cpu_hit_rate needs the throughput metric"
        )
    model = from_catalog(str(case["model_id"]))
    mshape = performance.model_shape(model, str(case["kv_cache_dtype"]))
    gpu, tp = str(case["gpu"]), int(case["tensor_parallel_size"])
    prompt = shape.new_prompt_tokens
    p = performance.prefill(mshape, gpu=gpu, tp=tp, new_tokens=prompt)
    r = performance.reload(
        mshape, engine=str(case["engine"]), tier="cpu", gpu=gpu, tp=tp, tokens=prompt
    )
    # A batch of prompts overlaps the per-request fixed costs: only the work per token
    # (compute of a prefill, bytes of a reload) limits its throughput.
    miss = p.total_ms - p.fixed_ms
    hit = r.total_ms - r.fixed_ms
    return miss / ((1 - h) * miss + h * hit)


def _tier_tokens(case: dict[str, Any], gib: float) -> float:
    """A tier of ``gib`` GiB in tokens of the case's model and KV dtype."""
    model = from_catalog(str(case["model_id"]))
    per_token = kv_bytes_per_token(model.architecture, str(case["kv_cache_dtype"]))
    return gib * GIB / per_token


def predict(case: dict[str, Any]) -> float:
    """The model's figure for ``case`` (module docstring).

    Raises:
        CaseError: a missing or malformed key, an unknown metric.
        SizingError: a model, GPU, engine or tier without a measured basis.
    """
    missing = [k for k in REQUIRED if k not in case]
    if missing:
        raise CaseError(f"case {case.get('id')!r}: missing {', '.join(missing)}")
    metric = case["metric"]
    if metric not in METRICS:
        raise CaseError(
            f"case {case['id']!r}: metric must be one of {', '.join(METRICS)}, got {metric!r}"
        )
    work = case["workload"]
    if not isinstance(work, dict):
        raise CaseError(f"case {case['id']!r}: workload must be an object")
    try:
        shape = ConversationShape(
            int(_number(case, work, "turns", 1)),
            int(_number(case, work, "prompt_tokens_per_turn", 1)),
            int(_number(case, work, "output_tokens_per_turn")),
        )
    except ValueError as exc:
        raise CaseError(f"case {case['id']!r}: {exc}") from None
    prefix = int(work.get("shared_prefix_tokens", 0) or 0)
    cpu_tokens = _tier_tokens(case, _number(case, case, "cpu_tier_gib_per_replica"))
    if metric == "cpu_hit_rate":
        return hit_rates(
            _stream(case, work, shape), gpu_tokens=0.0, cpu_tokens=cpu_tokens
        ).token_hit_rate
    catalog.gpu(str(case["gpu"]))
    if "cpu_hit_rate" in work:
        return _prewarmed(case, shape, min(1.0, _number(case, work, "cpu_hit_rate")))
    table = _table(case, shape, prefix)
    with_tier = hit_rates(_stream(case, work, shape), gpu_tokens=0.0, cpu_tokens=cpu_tokens)
    base = TierHits(0.0, 0.0, 0.0, 0.0, (0.0,) * 4, with_tier.max_token_hit_rate)
    if metric == "throughput_ratio_offload_vs_base":
        return table.moments(base)[0] / table.moments(with_tier)[0]
    stream = _stream(case, work, shape)
    loads = [
        replica_load(
            requests_per_s=stream.turns_per_s,
            table=table,
            hits=hits,
            output_tokens=0,
            tpot_ms=lambda batch: 0.0,
        )
        for hits in (with_tier, base)
    ]
    if any(load.overloaded for load in loads):
        raise CaseError(f"case {case['id']!r}: the replica is overloaded at this rate")
    return loads[0].ttft_mean_ms / loads[1].ttft_mean_ms


def evaluate(cases: list[dict[str, Any]]) -> tuple[list[TrafficResult], list[str]]:
    """Predict every case; returns the results and one line per case skipped (why)."""
    results, skipped = [], []
    for case in cases:
        try:
            predicted = predict(case)
            measured = _number(case, case, "measured")
        except (CaseError, SizingError) as exc:
            skipped.append(f"{case.get('id', '?')}: {exc}")
            continue
        except (TypeError, KeyError, AttributeError) as exc:  # a value of the wrong type
            skipped.append(f"{case.get('id', '?')}: malformed ({type(exc).__name__}: {exc})")
            continue
        if measured == 0:
            skipped.append(f"{case['id']}: measured is 0")
            continue
        split = str(case.get("split", "held_out"))
        results.append(
            TrafficResult(
                str(case["id"]),
                str(case["metric"]),
                split,
                predicted,
                measured,
                str(case["source"]),
            )
        )
    return results, skipped


def _stats(results: list[TrafficResult]) -> dict[str, Any]:
    errors = sorted(r.abs_error_pct for r in results)
    if not errors:
        return {"evaluated": 0}
    p90 = errors[min(len(errors) - 1, math.ceil(0.9 * len(errors)) - 1)]
    return {
        "evaluated": len(errors),
        "median_abs_error_pct": round(statistics.median(errors), 1),
        "p90_abs_error_pct": round(p90, 1),
        "max_abs_error_pct": round(errors[-1], 1),
    }


def summary(results: list[TrafficResult], not_evaluated: int = 0) -> dict[str, Any]:
    """Median, p90 and max |error| over all cases, per split and per metric;
    ``not_evaluated`` (cases that could not be evaluated) and ``evaluated_share_pct``
    (evaluated ÷ all cases × 100, ``None`` without cases)."""
    out = _stats(results)
    total = len(results) + not_evaluated
    out["not_evaluated"] = not_evaluated
    out["evaluated_share_pct"] = round(len(results) / total * 100, 1) if total else None
    out["by_split"] = {
        split: _stats([r for r in results if r.split == split])
        for split in sorted({r.split for r in results})
    }
    out["by_metric"] = {
        metric: _stats([r for r in results if r.metric == metric])
        for metric in sorted({r.metric for r in results})
    }
    return out
