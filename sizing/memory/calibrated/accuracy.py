"""How close the calibrated model comes to measured KV pools.

Each ground-truth case is predicted from its pre-start inputs alone
(:func:`sizing.memory.calibrated.setup_from_case`); the measured ``kv_cache_gib`` and
``kv_cache_tokens`` are read only to compare. Percentiles use the nearest-rank method
(the smallest value with at least p % of the errors at or below it).

Which cases are in-sample is data, not a version rule: a case whose log set one of the
model's constants names it in ``fitted_terms`` (the terms of :data:`FIT_TERMS`). The
summary reports those cases ("fit") apart from all others ("held out"), per engine; only
the held-out figures are an out-of-sample measure. A case added after the constants were
set is held out by rule, whatever its prediction. A case whose log does not state an
input the prediction needs says why in ``not_evaluable`` and is skipped with that reason;
it is counted apart and not toward the targets (the evaluated share is of the cases that
state their inputs), while a case skipped for any other reason counts against the share.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sizing.errors import SizingError
from sizing.memory.calibrated import predict, setup_from_case
from sizing.model.spec import ModelSpec, from_catalog


@dataclass(frozen=True)
class CaseResult:
    """One case: the prediction against the measurement, or why it was skipped.

    Attributes:
        case_id: the case's ``id``.
        engine: ``vllm`` or ``sglang``.
        model_id: the model.
        predicted_kv_cache_gib, measured_kv_cache_gib: per GPU, GiB.
        predicted_kv_cache_tokens, measured_kv_cache_tokens: tokens (measured may be
            ``None`` when the log did not give it).
        engine_version: the version string as the case states it.
        skipped: the reason the case was not evaluated, else ``None``.
        fitted_terms: the :data:`FIT_TERMS` set from this case's log (empty: held out).
        predicted_band_gib: for a version range whose terms differ, the lowest and highest
            predicted KV GiB (the prediction is their middle), else ``None``.
    """

    case_id: str
    engine: str
    model_id: str
    engine_version: str = ""
    predicted_kv_cache_gib: float | None = None
    measured_kv_cache_gib: float | None = None
    predicted_kv_cache_tokens: int | None = None
    measured_kv_cache_tokens: int | None = None
    skipped: str | None = None
    fitted_terms: tuple[str, ...] = ()
    predicted_band_gib: tuple[float, float] | None = None

    @property
    def error_pct(self) -> float | None:
        """Signed error of the KV GiB in % of the measurement."""
        if self.skipped or not self.measured_kv_cache_gib or self.predicted_kv_cache_gib is None:
            return None
        return (self.predicted_kv_cache_gib / self.measured_kv_cache_gib - 1) * 100

    @property
    def tokens_error_pct(self) -> float | None:
        """Signed error of the token count in % of the measurement."""
        if self.skipped or not self.measured_kv_cache_tokens:
            return None
        return ((self.predicted_kv_cache_tokens or 0) / self.measured_kv_cache_tokens - 1) * 100

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of the ``accuracy`` command."""
        head = {
            "id": self.case_id,
            "engine": self.engine,
            "engine_version": self.engine_version,
            "model_id": self.model_id,
            "split": "fit" if self.fitted_terms else "held_out",
        }
        if self.skipped:
            return {**head, "skipped": self.skipped}
        error = self.error_pct
        tokens_error = self.tokens_error_pct
        return {
            **head,
            "predicted_kv_cache_gib": round(self.predicted_kv_cache_gib or 0.0, 2),
            "measured_kv_cache_gib": self.measured_kv_cache_gib,
            "predicted_kv_cache_tokens": self.predicted_kv_cache_tokens,
            "measured_kv_cache_tokens": self.measured_kv_cache_tokens,
            "error_pct": None if error is None else round(error, 2),
            "tokens_error_pct": None if tokens_error is None else round(tokens_error, 2),
            "predicted_band_gib": None
            if self.predicted_band_gib is None
            else [round(v, 2) for v in self.predicted_band_gib],
        }


def percentile(values: Iterable[float], pct: float) -> float | None:
    """Nearest-rank percentile of ``values``; ``None`` when empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def evaluate_case(
    case: Mapping[str, Any], models: Callable[[str], ModelSpec] = from_catalog
) -> CaseResult:
    """Predict one case from its pre-start inputs and compare with its measurement."""
    case_id = str(case.get("id") or "?")
    engine = str(case.get("engine") or "")
    model_id = str(case.get("model_id") or "")
    version = str(case.get("engine_version") or "")
    raw_terms = case.get("fitted_terms") or ()
    terms = tuple(str(t) for t in raw_terms) if isinstance(raw_terms, list | tuple) else ()
    base = CaseResult(
        case_id=case_id,
        engine=engine,
        model_id=model_id,
        engine_version=version,
        fitted_terms=terms,
    )
    measured = case.get("kv_cache_gib")
    if terms == () and raw_terms:
        return _skip(base, f"fitted_terms must be a list of term names, got {raw_terms!r}")
    unknown = sorted(set(terms) - set(FIT_TERMS))
    if unknown:
        return _skip(base, f"fitted_terms names unknown terms: {', '.join(unknown)}")
    if case.get("not_evaluable"):
        return _skip(base, f"{NOT_EVALUABLE}{case['not_evaluable']}")
    if not measured:
        return _skip(base, "no measured kv_cache_gib")
    if isinstance(measured, bool) or not isinstance(measured, int | float):
        return _skip(base, f"kv_cache_gib must be a number, got {measured!r}")
    try:
        model = models(model_id)
        setup = setup_from_case(case, model.architecture.max_context_tokens)
        pred = predict(model, setup)
    except (SizingError, ValueError) as exc:
        return _skip(base, str(exc))
    except (TypeError, KeyError, AttributeError) as exc:  # a value of the wrong type
        return _skip(base, f"malformed ({type(exc).__name__}: {exc})")
    return CaseResult(
        case_id=case_id,
        engine=engine,
        model_id=model_id,
        engine_version=version,
        predicted_kv_cache_gib=pred.kv_cache_gib,
        measured_kv_cache_gib=float(measured),
        predicted_kv_cache_tokens=pred.kv_cache_tokens,
        measured_kv_cache_tokens=case.get("kv_cache_tokens"),
        fitted_terms=terms,
        predicted_band_gib=pred.kv_cache_gib_band,
    )


NOT_EVALUABLE = "not evaluable: "
"""Start of the skip reason of a case whose log does not state an input."""


def _skip(base: CaseResult, reason: str) -> CaseResult:
    return replace(base, skipped=reason)


FIT_TERMS: dict[str, str] = {
    "v1_activation": "V1 activation coefficients (sizing.memory.calibrated.vllm ACT_*)",
    "v1_activation_sort": "the PyTorch-sort sampler's peak (ACT_SORT_PER_VOCAB_GIB)",
    "cuda_graph_estimate": "size of the CUDA-graph estimate (0.85 / 1.5 GiB)",
    "non_torch_v0_15_tp1": "non-torch memory at TP 1, v0.15 and later (0.25 GiB)",
    "non_torch_nvswitch_tp": "non-torch memory at TP >= 2 with the all-reduce fusion (2.1 GiB)",
    "non_torch_pp": "non-torch memory at PP >= 2 (0.07 GiB)",
    "non_torch_v0_10_tp1": "non-torch memory at TP 1 before v0.15 (0.14 GiB)",
    "non_torch_pcie_tp": "non-torch memory at TP >= 2 on PCIe cards (0.21 GiB)",
    "non_torch_v0": "non-torch memory of the V0 engine (0.35 GiB)",
    "sglang_context": "SGLang CUDA context before load (0.38 GiB)",
    "sglang_distributed_pcie": "SGLang distributed init at TP >= 2 on PCIe cards (0.48 GiB)",
}
"""The constants set from case logs, by the name cases use in ``fitted_terms``."""


def in_fit_set(result: CaseResult) -> bool:
    """True for a case whose log set one of the model's constants (``fitted_terms``)."""
    return bool(result.fitted_terms)


def summarize(results: Iterable[CaseResult]) -> dict[str, Any]:
    """``evaluated``, ``skipped``, median, p90 and max absolute KV-GiB error, overall, per
    engine and per split (``vllm_by_split``, ``sglang_by_split``: ``fit`` / ``held_out``,
    see the module docstring)."""
    results = list(results)
    done = [r for r in results if r.error_pct is not None]

    def stats(rows: list[CaseResult]) -> dict[str, Any]:
        errors = [abs(r.error_pct or 0.0) for r in rows]
        med = statistics.median(errors) if errors else None
        p90 = percentile(errors, 90)
        return {
            "evaluated": len(rows),
            "median_abs_error_pct": None if med is None else round(med, 2),
            "p90_abs_error_pct": None if p90 is None else round(p90, 2),
            "max_abs_error_pct": round(max(errors), 2) if errors else None,
        }

    summary = stats(done)
    summary["skipped"] = len(results) - len(done)
    unstated = sum(1 for r in results if (r.skipped or "").startswith(NOT_EVALUABLE))
    summary["not_evaluable"] = unstated
    stated = len(results) - unstated
    summary["evaluated_share_pct"] = round(100 * len(done) / stated, 1) if stated else 0.0
    summary["by_engine"] = {
        engine: stats([r for r in done if r.engine == engine])
        for engine in sorted({r.engine for r in done})
    }
    for engine in ("vllm", "sglang"):
        rows = [r for r in done if r.engine == engine]
        summary[f"{engine}_by_split"] = {
            "fit": stats([r for r in rows if in_fit_set(r)]),
            "held_out": stats([r for r in rows if not in_fit_set(r)]),
        }
    summary["targets"] = _targets(summary)
    return summary


TARGETS: tuple[tuple[str, str, str, float, str], ...] = (
    ("vllm held-out median", "vllm_by_split", "median_abs_error_pct", 0.5, "max"),
    ("vllm held-out p90", "vllm_by_split", "p90_abs_error_pct", 2.0, "max"),
    ("vllm held-out max", "vllm_by_split", "max_abs_error_pct", 5.0, "max"),
    ("sglang median, all cases", "by_engine", "median_abs_error_pct", 2.0, "max"),
    ("evaluated share", "", "evaluated_share_pct", 95.0, "min"),
)
"""Issue 17's accuracy targets: (label, summary group, figure, limit, ``max``/``min``)."""


def _targets(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each target with the figure reached and whether it is met (``None``: no cases)."""
    out = []
    for label, group, key, limit, kind in TARGETS:
        if group == "vllm_by_split":
            value = summary[group]["held_out"][key]
        elif group == "by_engine":
            value = summary[group].get("sglang", {}).get(key)
        else:
            value = summary[key]
        met = None if value is None else (value <= limit if kind == "max" else value >= limit)
        out.append({"target": label, "limit": limit, "kind": kind, "value": value, "met": met})
    return out


MISS_PCT = 5.0
"""|error| above which a case is listed as a miss (the held-out maximum target)."""


def misses(results: Iterable[CaseResult]) -> list[CaseResult]:
    """The evaluated cases whose |error| exceeds :data:`MISS_PCT`, largest first."""
    done = [r for r in results if r.error_pct is not None and abs(r.error_pct) > MISS_PCT]
    return sorted(done, key=lambda r: -abs(r.error_pct or 0.0))


def evaluate(
    cases: Iterable[Mapping[str, Any]], models: Callable[[str], ModelSpec] = from_catalog
) -> tuple[list[CaseResult], dict[str, Any]]:
    """All cases' results and their summary."""
    results = [evaluate_case(case, models) for case in cases]
    return results, summarize(results)
