"""The verdict's TTFT comparison reads two different times differently, with the gain.

Case: Qwen3-32B-FP8, 8,192 tokens, 500 users, 4 × H200 NVL per node, FP8 cache, 2,000
new conversations a day. Its TTFT p95 is 117.3 ms with the tier and 124.8 ms on the same
GPUs without it (the summary's ``ttft_p95_ms`` and ``ttft_p95_without_tier_ms``); at
two places of seconds both read 0.12 s. The sentence must quote them in ms at the
summary's one place, with the gain 124.8 − 117.3 = 7.5 ms, 7.5 / 124.8 = 6.0 %.
"""

from __future__ import annotations

import math

import pytest

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.serving.benefit import MAX_TTFT_PLACES, ttft_comparison
from sizing.summary import plan_summary
from tests.factories import plan_request

H200 = {
    "model": from_catalog("Qwen/Qwen3-32B-FP8"),
    "context_tokens": 8192,
    "users": 500,
    "gpu": "h200-nvl",
    "gpus_per_node": 4,
    "kv_dtype": "fp8",
    "new_conversations_per_day": 2000,
}


def test_the_sentence_quotes_both_times_and_the_gain() -> None:
    plan = make_plan(plan_request(**H200))  # type: ignore[arg-type]
    s = plan_summary(plan)
    assert (s["ttft_p95_ms"], s["ttft_p95_without_tier_ms"]) == (117.3, 124.8)
    (hits,) = [n for n in plan.verdict.reason_notes if n.code == "tier_hits"]
    v = dict(hits.values)
    assert (v["ttft_ms"], v["ttft_no_tier_ms"]) == (117.3, 124.8)
    assert (v["gain_ms"], v["gain_pct"]) == (7.5, 6.0)
    assert "TTFT p95 117.3 ms instead of 124.8 ms" in hits.text
    assert "7.5 ms (6 %) less" in hits.text


def test_times_that_agree_at_one_place_get_more() -> None:
    # 117.31 and 117.34 both read 117.3 at one place; at two they differ.
    values = dict(ttft_comparison(117.31, 117.34))
    assert (values["ttft_ms"], values["ttft_no_tier_ms"], values["gain_ms"]) == (
        117.31,
        117.34,
        0.03,
    )


def test_whole_times_print_without_a_fraction() -> None:
    # 1,000.0 and 1,500.0 differ at one place, and both are whole ms.
    values = dict(ttft_comparison(1000.0, 1500.0))
    assert values == {"ttft_ms": 1000, "ttft_no_tier_ms": 1500, "gain_ms": 500, "gain_pct": 33.3}
    assert all(type(values[k]) is int for k in ("ttft_ms", "ttft_no_tier_ms", "gain_ms"))


def test_times_closer_than_the_last_place_stop_there() -> None:
    values = dict(ttft_comparison(100.0, 100.0001))
    assert MAX_TTFT_PLACES == 3
    assert (values["ttft_ms"], values["ttft_no_tier_ms"], values["gain_ms"]) == (100, 100, 0)


def test_an_endless_time_has_no_gain() -> None:
    with pytest.raises(ValueError, match="finite"):
        ttft_comparison(117.3, math.inf)
