"""Targets that do not move: one no-load floor, a plan marked when it misses the
customer's targets, one relaxed target for every configuration of a search, and the
monotonicity a buyer expects of the GPU count and the price.

Rules: sizing/serving/targets.py (one floor, 1.5 × it as the tightest target sized for),
sizing/search/nearest.py (one relaxed target for all), sizing/search/evaluate.py (misses
against the customer's targets).
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sizing.bom.lines import bill_of_materials
from sizing.errors import SizingError
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, make_plan
from sizing.search.cheapest import recommend
from sizing.serving.targets import RELAXED_TARGET_FACTOR
from sizing.traffic.hit_rate import TierHits
from tests.factories import plan_request
from tests.sizing.test_search import TOY, table_price

LLAMA_70B = from_catalog("meta-llama/Llama-3.3-70B-Instruct")

PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""A bounded number of random workloads per property, so that ``make test`` stays fast."""

MODELS = ["Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-8B", "meta-llama/Llama-3.3-70B-Instruct"]
GPUS = [("rtx-pro-6000-se", 4), ("h200-nvl", 4), ("h100-sxm", 8)]


def _plan(**fields: Any) -> Plan | None:
    """The plan of a workload, ``None`` when the engine refuses it (an input out of range,
    a layout that cannot hold it, more than the node limit)."""
    model = from_catalog(fields.pop("model_id"))
    try:
        return make_plan(plan_request(model=model, **fields))
    except SizingError:
        return None


def _gpus(plan: Plan) -> int:
    return plan.request.workload.gpus_per_node * plan.parallelism.nodes


workloads = st.fixed_dictionaries(
    {
        "model_id": st.sampled_from(MODELS),
        "context_tokens": st.sampled_from([4096, 8192, 32768]),
        "users": st.integers(min_value=10, max_value=3000),
        "kv_dtype": st.sampled_from(["fp8", "auto"]),
        "layout": st.sampled_from(GPUS),
    }
)


def _fields(work: dict[str, Any], **changes: Any) -> dict[str, Any]:
    gpu, per_node = work["layout"]
    out = {k: v for k, v in work.items() if k != "layout"}
    return {**out, "gpu": gpu, "gpus_per_node": per_node, **changes}


def test_a_default_target_too_close_to_the_floor_is_sized_at_one_multiple_and_marked() -> None:
    # Llama-3.3-70B at 32,768 tokens on four RTX PRO 6000 (the search issue's own case):
    # the TTFT p95 without load is close to the default 2,000 ms, so the plan is sized
    # for 1.5 × that floor and marked as missing the 2,000 ms; typed, 2,000 ms and
    # 2,001 ms are the same plan as the default.
    base = {"model_id": LLAMA_70B.repo_id, "context_tokens": 32768, "kv_dtype": "fp8"}
    plan = _plan(**base, users=2000, gpu="rtx-pro-6000-se", gpus_per_node=4)
    assert plan is not None and plan.serving is not None
    serving = plan.serving
    assert serving.ttft_p95_sized_ms == RELAXED_TARGET_FACTOR * serving.ttft_p95_floor_ms
    assert serving.ttft_p95_sized_ms > 2000 and not serving.meets_targets
    typed = _plan(**base, users=2000, gpu="rtx-pro-6000-se", gpus_per_node=4, ttft_p95_ms=2001)
    assert typed is not None and _gpus(typed) == _gpus(plan)


def test_a_search_no_configuration_can_meet_shares_one_relaxed_target() -> None:
    # Llama-3.3-70B at 65,536 tokens on two or four RTX PRO 6000 per node: no TP size and
    # no count brings one request's TTFT p95 within 1.5 × of its floor under 2,000 ms.
    request = plan_request(
        model=LLAMA_70B,
        context_tokens=65536,
        users=200,
        kv_dtype="fp8",
        gpu="rtx-pro-6000-se",
        gpus_per_node=4,
    )
    rec = recommend(
        request,
        gpu_slugs=["rtx-pro-6000-se"],
        price=table_price(TOY),  # type: ignore[arg-type]
        gpus_per_node=[2, 4],
    )
    assert rec.relaxed is not None and rec.relaxed.ttft_p95_ms is not None
    relaxed = rec.relaxed.ttft_p95_ms
    assert relaxed > 2000 and relaxed == math.ceil(relaxed)
    assert rec.cheapest and rec.binding == "TTFT p95"
    for config in rec.cheapest:
        # Each meets the one target searched for all, and is still judged by the
        # customer's 2,000 ms, which none meets.
        assert config.ttft_p95_ms is not None and config.ttft_p95_ms <= relaxed
        assert not config.meets_targets
        assert config.misses[0].limit == 2000
        assert config.serving.ttft_p95_target_ms == relaxed


@PROPERTY
@given(work=workloads, more=st.integers(min_value=1, max_value=3000))
def test_more_users_never_take_fewer_gpus_nor_a_lower_price(
    work: dict[str, Any], more: int
) -> None:
    few = _plan(**_fields(work))
    many = _plan(**_fields(work, users=work["users"] + more))
    assume(few is not None and many is not None)
    assert few is not None and many is not None
    assume(few.serving is not None and many.serving is not None)
    assert few.serving is not None and many.serving is not None
    # Where both meet the customer's targets (a relaxed plan is sized for a target of its
    # own floor, which rises with the users' load, and is marked as missing instead).
    assume(few.serving.meets_targets and many.serving.meets_targets)
    assert _gpus(many) >= _gpus(few)
    price = table_price(TOY)
    assert price(bill_of_materials(many)) >= price(bill_of_materials(few))  # type: ignore[operator]


@PROPERTY
@given(work=workloads, tight=st.sampled_from([500, 1000, 2000]), looser=st.integers(1, 8000))
def test_a_looser_target_never_takes_more_gpus(
    work: dict[str, Any], tight: int, looser: int
) -> None:
    strict = _plan(**_fields(work, ttft_p95_ms=tight))
    loose = _plan(**_fields(work, ttft_p95_ms=tight + looser))
    assume(strict is not None and loose is not None)
    assert strict is not None and loose is not None
    # Holds whether or not a target is relaxed: the target sized for never falls as the
    # customer's rises (sizing/serving/targets.py).
    assert _gpus(loose) <= _gpus(strict)


@PROPERTY
@given(
    work=workloads, limit=st.sampled_from([768, 1152, 1536, 2304]), more=st.sampled_from([384, 768])
)
def test_more_host_memory_never_lowers_the_combined_hit_rate(
    work: dict[str, Any], limit: int, more: int
) -> None:
    small = _plan(**_fields(work, max_host_memory_gb=limit))
    large = _plan(**_fields(work, max_host_memory_gb=limit + more))
    assume(small is not None and large is not None)
    assert small is not None and large is not None
    assume(small.serving is not None and large.serving is not None)
    assert small.serving is not None and large.serving is not None
    assume(_gpus(small) == _gpus(large))  # the same GPUs: only the tier differs

    def hit(h: TierHits) -> float:
        # The tiers on the node; a shared tier is sold only where it takes 5 % of the
        # returns (sizing/serving/serve.py), so a larger CPU tier can make it unneeded.
        return h.gpu + h.cpu + h.nvme

    assert hit(large.serving.hits) >= hit(small.serving.hits) - 1e-9


@PROPERTY
@given(work=workloads, more=st.integers(min_value=100, max_value=20_000))
def test_the_price_rises_with_the_nodes(work: dict[str, Any], more: int) -> None:
    few = _plan(**_fields(work))
    many = _plan(**_fields(work, users=work["users"] + more))
    assume(few is not None and many is not None)
    assert few is not None and many is not None
    assume(many.parallelism.nodes > few.parallelism.nodes)
    price = table_price(TOY)
    assert price(bill_of_materials(many)) > price(bill_of_materials(few))  # type: ignore[operator]


def test_a_replica_whose_prefills_cannot_keep_up_is_bound_by_the_ttft_not_the_tpot() -> None:
    # One replica fewer than the load needs, 97 % busy prefilling at a TPOT of 54 ms
    # against 200 ms, names the TTFT p95 (sizing/serving/replicas.py); saturated, ρ ≥ 1,
    # its TPOT is infinite but still no measure of what binds.
    from sizing.serving.load import ReplicaLoad
    from sizing.serving.replicas import _compute_binding

    busy = ReplicaLoad(1.0, 0.97, 900.0, 2500.0, 54.0, 40.0)
    saturated = ReplicaLoad(1.0, 1.02, math.inf, math.inf, math.inf, 40.0)
    slow_decode = ReplicaLoad(1.0, 0.30, 300.0, 600.0, 260.0, 90.0)
    assert _compute_binding(busy, 200.0) == "ttft_p95"
    assert _compute_binding(saturated, 200.0) == "ttft_p95"
    assert _compute_binding(slow_decode, 200.0) == "tpot"
