"""Accuracy of the traffic model on the bundled published cases, and bad cases."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from sizing.serving.accuracy import CaseError, evaluate, predict, summary


def _cases() -> list[dict[str, object]]:
    text = resources.files("sizing").joinpath("data/traffic_cases.json").read_text("utf-8")
    return json.loads(text)["cases"]  # type: ignore[no-any-return]


def test_bundled_cases_meet_the_held_out_target() -> None:
    # Traffic issue target: cases not used for calibration within ±25 % median.
    results, skipped = evaluate(_cases())  # type: ignore[arg-type]
    assert skipped == []
    s = summary(results)
    assert s["evaluated"] == 12
    assert s["by_split"]["held_out"]["median_abs_error_pct"] <= 25


def test_hit_rate_rises_with_the_tier() -> None:
    # The Mooncake synthetic trace at 1M, 3M, 10M, 30M tokens: the hit rate rises and
    # stays below the trace's maximum, 0.651 (benefit-lru-sim-mooncake-traces).
    cases = [c for c in _cases() if str(c["id"]).startswith("mooncake-synthetic")]
    predicted = [predict(c) for c in cases]  # type: ignore[arg-type]
    assert predicted == sorted(predicted)
    assert predicted[-1] < 0.7


def test_bad_cases_are_skipped_with_the_reason() -> None:
    good = _cases()[0]
    missing = {k: v for k, v in good.items() if k != "workload"}
    unknown = {**good, "id": "u", "metric": "joy"}
    no_rate = {
        **good,
        "id": "r",
        "workload": {"turns": 2, "prompt_tokens_per_turn": 10, "output_tokens_per_turn": 1},
    }
    wrong_type = {**good, "id": "w", "workload": {**good["workload"], "turns": [2]}}
    results, skipped = evaluate([missing, unknown, no_rate, wrong_type])  # type: ignore[list-item]
    assert results == []
    assert skipped[3].startswith("w: ")
    # None of the four evaluated: the summary counts them.
    assert summary(results, len(skipped))["not_evaluated"] == 4
    assert "missing workload" in skipped[0]
    assert "metric must be one of" in skipped[1]
    assert "request_rate_per_s or max_concurrency" in skipped[2]
    with pytest.raises(CaseError):
        predict({**good, "measured": "x", "workload": "no"})  # type: ignore[dict-item]
