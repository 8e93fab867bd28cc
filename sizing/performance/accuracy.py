"""How close the performance model comes to measured TTFTs (``manage.py accuracy --kind ttft``).

A case is a JSON object with ``id``, ``model_id`` (a catalog repo id), ``gpu`` (a catalog
slug), ``gpu_count``, ``tensor_parallel_size``, ``engine`` (``vllm``, ``lmcache``,
``sglang``, ``dynamo``), ``kv_cache_dtype``, ``prompt_tokens``, ``tier`` (``gpu``,
``cpu``, ``nvme``, ``shared``), ``metric`` (``ttft_miss_ms``, ``ttft_hit_ms`` or
``ttft_speedup`` = miss ÷ hit), ``measured`` and ``source``. Optional: ``cached_tokens``
(default ``prompt_tokens − 1``: the whole prompt but the last token comes from the tier)
and ``tokenize`` (default ``true``; ``false`` for benchmarks that pass token ids).

Each case's error is ``abs_error_pct = |predicted / measured − 1| × 100``; the summary
gives the median, the nearest-rank p90 and the maximum over the cases, and how many
were evaluated. A case the model has no measured basis for (an engine or tier) or a
malformed case is not evaluated: :func:`evaluate` lists it with its reason
(:class:`NotEvaluated`) and counts it against the evaluated share, and evaluates the rest.

The shipped cases: ``sizing/data/ttft_cases_calibration.json`` (the points the
constants were fitted on, in-sample) and ``sizing/data/ttft_cases_held_out.json``
(points no constant was fitted on); ``docs/accuracy.md`` reports both apart.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sizing.data_files import data_text
from sizing.errors import SizingError
from sizing.model.spec import from_catalog
from sizing.performance.calibration import ENGINES, TIERS
from sizing.performance.prefill import prefill
from sizing.performance.shape import model_shape
from sizing.performance.ttft import ttft_hit, ttft_miss_ms

METRICS = ("ttft_miss_ms", "ttft_hit_ms", "ttft_speedup")
REQUIRED = (
    "id",
    "model_id",
    "gpu",
    "gpu_count",
    "tensor_parallel_size",
    "engine",
    "kv_cache_dtype",
    "prompt_tokens",
    "tier",
    "metric",
    "measured",
    "source",
)


class CaseError(ValueError):
    """A case that cannot be evaluated: malformed, or without a measured basis."""


@dataclass(frozen=True)
class NotEvaluated:
    """A case :func:`evaluate` could not evaluate, and why (the :class:`CaseError` text)."""

    case_id: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        """The JSON form: ``id`` and ``reason``."""
        return {"id": self.case_id, "reason": self.reason}


@dataclass(frozen=True)
class TtftResult:
    """One case's prediction against its measurement."""

    case_id: str
    model_id: str
    gpu: str
    engine: str
    tier: str
    metric: str
    prompt_tokens: int
    measured: float
    predicted: float
    basis: tuple[str, ...]
    source: str

    @property
    def abs_error_pct(self) -> float:
        """``|predicted / measured − 1| × 100``."""
        return abs(self.predicted / self.measured - 1) * 100

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of one case."""
        return {
            "id": self.case_id,
            "model_id": self.model_id,
            "gpu": self.gpu,
            "engine": self.engine,
            "tier": self.tier,
            "metric": self.metric,
            "prompt_tokens": self.prompt_tokens,
            "measured": self.measured,
            "predicted": round(self.predicted, 2),
            "abs_error_pct": round(self.abs_error_pct, 2),
            "basis": list(self.basis),
            "source": self.source,
        }


def _int(case: Mapping[str, Any], key: str, cid: str, low: int = 1) -> int:
    value = case.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise CaseError(f"case {cid}: {key} must be an integer ≥ {low}, got {value!r}")
    return value


def _check(case: Mapping[str, Any]) -> str:
    cid = str(case.get("id") or "?")
    missing = [k for k in REQUIRED if k not in case]
    if missing:
        raise CaseError(f"case {cid}: missing {', '.join(missing)}")
    if case["metric"] not in METRICS:
        raise CaseError(f"case {cid}: metric must be one of {', '.join(METRICS)}")
    if case["engine"] not in ENGINES:
        raise CaseError(
            f"case {cid}: no measured basis for engine {case['engine']!r} "
            f"(known: {', '.join(ENGINES)})"
        )
    if case["tier"] not in TIERS:
        raise CaseError(f"case {cid}: tier must be one of {', '.join(TIERS)}")
    measured = case["measured"]
    if isinstance(measured, bool) or not isinstance(measured, int | float) or measured <= 0:
        raise CaseError(f"case {cid}: measured must be a positive number, got {measured!r}")
    return cid


def evaluate_case(case: Mapping[str, Any]) -> TtftResult:
    """Predict one case's metric from its inputs and compare with ``measured``.

    Raises:
        CaseError: for a malformed case or one without a measured basis (the message
            names the case).
    """
    cid = _check(case)
    prompt = _int(case, "prompt_tokens", cid)
    tp = _int(case, "tensor_parallel_size", cid)
    if _int(case, "gpu_count", cid) < tp:
        raise CaseError(f"case {cid}: gpu_count is below tensor_parallel_size")
    cached = case.get("cached_tokens", prompt - 1)
    if isinstance(cached, bool) or not isinstance(cached, int) or not 0 <= cached < prompt:
        raise CaseError(f"case {cid}: cached_tokens must be 0 to prompt_tokens − 1")
    tokenize = case.get("tokenize", True) is not False
    metric = case["metric"]
    try:
        shape = model_shape(from_catalog(str(case["model_id"])), str(case["kv_cache_dtype"]))
        gpu = str(case["gpu"])
        miss = ttft_miss_ms(shape, gpu=gpu, tp=tp, prompt_tokens=prompt, tokenize=tokenize)
        basis: tuple[str, ...] = ()
        if metric == "ttft_miss_ms":
            predicted = miss
        else:
            hit = ttft_hit(
                shape,
                engine=str(case["engine"]),
                tier=str(case["tier"]),
                prompt_tokens=prompt,
                cached_tokens=cached,
                tokenize=tokenize,
                gpu=gpu,
                tp=tp,
            )
            basis = hit.basis.sources
            predicted = hit.ttft_ms if metric == "ttft_hit_ms" else miss / hit.ttft_ms
        if not basis:
            basis = prefill(shape, gpu=gpu, tp=tp, new_tokens=1).basis.sources
    except SizingError as exc:
        raise CaseError(f"case {cid}: {exc.message}") from None
    except ValueError as exc:
        raise CaseError(f"case {cid}: {exc}") from None
    return TtftResult(
        case_id=cid,
        model_id=str(case["model_id"]),
        gpu=str(case["gpu"]),
        engine=str(case["engine"]),
        tier=str(case["tier"]),
        metric=metric,
        prompt_tokens=prompt,
        measured=float(case["measured"]),
        predicted=predicted,
        basis=basis,
        source=str(case["source"]),
    )


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile (the smallest value with at least ``pct`` % at or below)."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


@cache
def aiconfigurator_ttft() -> dict[str, float]:
    """NVIDIA AIConfigurator's TTFT for the shipped miss cases it supports, ms by case id
    (``sizing/data/aiconfigurator_ttft.json``: the version, the day and the command line
    it was run with on each case's model config, GPU, TP and prompt)."""
    text = data_text("aiconfigurator_ttft.json")
    return {str(k): float(v) for k, v in json.loads(text)["ttft_ms"].items()}


def compared(results: Sequence[TtftResult]) -> list[tuple[TtftResult, float]]:
    """The results AIConfigurator has a figure for, each with that figure (ms)."""
    theirs = aiconfigurator_ttft()
    return [(r, theirs[r.case_id]) for r in results if r.case_id in theirs]


@cache
def calibration_ids() -> frozenset[str]:
    """Ids of the shipped cases the constants were fitted on."""
    text = data_text("ttft_cases_calibration.json")
    return frozenset(str(c["id"]) for c in json.loads(text)["cases"])


def _stats(results: Sequence[TtftResult]) -> dict[str, Any]:
    errors = [r.abs_error_pct for r in results]

    def r2(value: float | None) -> float | None:
        return None if value is None else round(value, 2)

    return {
        "median_abs_error_pct": r2(statistics.median(errors)) if errors else None,
        "p90_abs_error_pct": r2(percentile(errors, 90)),
        "max_abs_error_pct": r2(max(errors)) if errors else None,
        "evaluated": len(errors),
    }


def summarize(results: Sequence[TtftResult], not_evaluated: int = 0) -> dict[str, Any]:
    """``median_abs_error_pct``, ``p90_abs_error_pct``, ``max_abs_error_pct`` and
    ``evaluated`` over ``results`` (``None`` figures when empty), ``not_evaluated`` (the
    count of cases that could not be evaluated) and ``evaluated_share_pct`` (evaluated ÷
    all cases × 100, ``None`` without cases), and the same figures apart for the cases the
    constants were fitted on (``in_sample``, by id in ``ttft_cases_calibration.json``) and
    all others (``out_of_sample``)."""
    fitted = calibration_ids()
    total = len(results) + not_evaluated
    return {
        **_stats(results),
        "not_evaluated": not_evaluated,
        "evaluated_share_pct": round(len(results) / total * 100, 1) if total else None,
        "in_sample": _stats([r for r in results if r.case_id in fitted]),
        "out_of_sample": _stats([r for r in results if r.case_id not in fitted]),
    }


def evaluate(
    cases: Sequence[Mapping[str, Any]],
) -> tuple[list[TtftResult], list[NotEvaluated], dict[str, Any]]:
    """Every case evaluated, every case that could not be with its reason, and the summary
    (:func:`summarize`, counting the cases not evaluated). Never raises for a case."""
    results: list[TtftResult] = []
    skipped: list[NotEvaluated] = []
    for case in cases:
        try:
            results.append(evaluate_case(case))
        except CaseError as exc:
            skipped.append(NotEvaluated(str(case.get("id") or "?"), str(exc)))
        except (TypeError, KeyError, AttributeError) as exc:  # a value of the wrong type
            cid = str(case.get("id") or "?")
            skipped.append(
                NotEvaluated(cid, f"case {cid}: malformed ({type(exc).__name__}: {exc})")
            )
    return results, skipped, summarize(results, len(skipped))
