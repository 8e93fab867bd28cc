"""The TTFT accuracy rule and the shipped case files (sizing/performance/accuracy.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sizing.performance.accuracy import CaseError, evaluate, evaluate_case

DATA = Path(__file__).resolve().parents[2] / "sizing" / "data"


def _cases(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((DATA / name).read_text("utf-8"))["cases"]
    return cases


def _case(**changes: Any) -> dict[str, Any]:
    # vllm-blog-ttft-sweep: Llama-3.1-8B on one H100, 10,000-token miss, 260 ms.
    case = {
        "id": "t", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "h100-sxm",
        "gpu_count": 1, "tensor_parallel_size": 1, "engine": "vllm", "kv_cache_dtype": "auto",
        "prompt_tokens": 10_000, "tier": "cpu", "metric": "ttft_miss_ms", "measured": 260,
        "source": "vLLM blog, 8 January 2026, Figure 1", "tokenize": False,
    }  # fmt: skip
    case.update(changes)
    return case


def test_error_is_relative_to_the_measurement() -> None:
    r = evaluate_case(_case())
    assert r.abs_error_pct == pytest.approx(abs(r.predicted / 260 - 1) * 100)
    assert r.basis == ("vllm-blog-ttft-sweep",)
    speedup = evaluate_case(_case(metric="ttft_speedup", measured=6.5))
    hit = evaluate_case(_case(metric="ttft_hit_ms", measured=40))
    assert speedup.predicted == pytest.approx(r.predicted / hit.predicted)


def test_held_out_cases_meet_the_targets() -> None:
    # Targets: median |error| ≤ 20 %, p90 ≤ 40 % on cases no constant was fitted on.
    _results, skipped, summary = evaluate(_cases("ttft_cases_held_out.json"))
    assert skipped == []
    # 5 hits and speedups (vLLM blog, agentic-kvc) and 3 NIM misses (ttft_cases_held_out.json).
    assert summary["evaluated"] == 8
    assert summary["median_abs_error_pct"] <= 20
    assert summary["p90_abs_error_pct"] <= 40


def test_held_out_cases_are_not_calibration_cases() -> None:
    calibration = {c["id"] for c in _cases("ttft_cases_calibration.json")}
    held_out = _cases("ttft_cases_held_out.json")
    assert not calibration & {c["id"] for c in held_out}
    # Every shipped case names its source.
    assert all(c["source"] for c in held_out)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"gpu": "nobody-gpu"}, "case t: unknown GPU"),
        ({"engine": "trtllm"}, "case t: no measured basis for engine 'trtllm'"),
        (
            {"metric": "ttft_hit_ms", "engine": "dynamo", "tier": "nvme"},
            "case t: no measured basis for Dynamo",
        ),
        ({"metric": "ttft_hit_ms", "tier": "nvme"}, "no measured basis for vLLM native"),
        ({"metric": "tpot"}, "metric must be one of"),
        ({"measured": 0}, "measured must be a positive number"),
        ({"prompt_tokens": "many"}, "prompt_tokens must be an integer"),
        ({"gpu_count": 1, "tensor_parallel_size": 2}, "gpu_count is below"),
        ({"model_id": "nobody/nothing"}, "not in the offline catalog"),
    ],
)
def test_cases_without_a_basis_or_malformed_are_refused(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(CaseError, match=message):
        evaluate_case(_case(**changes))


def test_a_missing_field_is_named() -> None:
    case = _case()
    del case["source"]
    with pytest.raises(CaseError, match="case t: missing source"):
        evaluate_case(case)


def test_evaluate_lists_what_it_cannot_evaluate_and_evaluates_the_rest() -> None:
    results, skipped, summary = evaluate(
        [_case(engine="trtllm"), _case(id="u"), _case(id="w", tensor_parallel_size=None)]
    )
    assert [r.case_id for r in results] == ["u"]
    assert [(n.case_id, n.reason[:41]) for n in skipped] == [
        ("t", "case t: no measured basis for engine 'trt"),
        ("w", "case w: tensor_parallel_size must be an i"),
    ]
    # 1 evaluated of 3: 33.3 %.
    assert (summary["evaluated"], summary["not_evaluated"]) == (1, 2)
    assert summary["evaluated_share_pct"] == 33.3
