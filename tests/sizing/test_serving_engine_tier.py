"""A workload that names its serving engine gets that engine's CPU tier and DIMMs."""

from __future__ import annotations

import pytest

from sizing.engines.bundle import pinned_bytes, render
from sizing.engines.deployment import from_plan
from sizing.errors import SizingError
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import Workload

# DeepSeek-V3 (MLA) on 8 × B200 with TP 8 at 8,192 tokens (the issue 17 layout), 2,000
# users so that most rest in the CPU tier. The latent (576 values × 61 layers in fp8,
# config.json) is on every rank.
MLA = Workload(
    model="deepseek-ai/DeepSeek-V3",
    context_tokens=8192,
    users=2000,
    gpu="b200",
    gpus_per_node=8,
    tensor_parallel_size=8,
)


def _plan(engine: str):  # type: ignore[no-untyped-def]
    model = from_catalog(MLA.model)
    return make_plan(PlanRequest(model=model, workload=MLA.replace(serving_engine=engine)))


def test_vllm_and_lmcache_tiers_hold_the_latent_once() -> None:
    # vLLM native (vllm/v1/kv_offload/cpu/spec.py, one canonical copy on one node) and
    # LMCache in process (save_only_first_rank for MLA) keep one copy for the 8 ranks;
    # SGLang's MLA host pool and Dynamo KVBM keep it on every rank, as does a plan that
    # names no engine (the largest allocation).
    undecided, vllm, lmcache = _plan(""), _plan("vllm"), _plan("lmcache")
    sglang, dynamo = _plan("sglang"), _plan("dynamo")
    kept = undecided.cpu_tier.conversations_per_instance
    assert kept > 0
    for plan in (vllm, lmcache, sglang, dynamo):
        assert plan.cpu_tier.conversations_per_instance == kept
    assert sglang.cpu_tier.total_gib == undecided.cpu_tier.total_gib
    assert dynamo.cpu_tier.total_gib == undecided.cpu_tier.total_gib
    ranks = undecided.cpu_tier.ranks
    one_copy = ranks.stages[0].tier_bytes(kept) * undecided.parallelism.total_replicas
    assert vllm.cpu_tier.total_gib * 2**30 == pytest.approx(one_copy)
    assert lmcache.cpu_tier.total_gib == vllm.cpu_tier.total_gib
    assert vllm.cpu_tier.total_gib == pytest.approx(undecided.cpu_tier.total_gib / 8)

    # The DIMMs follow the tier: vLLM's plan buys less host memory.
    def installed_gb(plan) -> int:  # type: ignore[no-untyped-def]
        return plan.host.dimm_count * plan.host.dimm_gb

    assert installed_gb(vllm) < installed_gb(undecided)


def test_dense_models_are_sized_alike_for_every_engine() -> None:
    # Llama-3.1-8B (GQA, 8 KV heads at TP 1): every engine stores each rank's own heads.
    work = Workload(model="meta-llama/Llama-3.1-8B-Instruct", context_tokens=8192, users=500)
    model = from_catalog(work.model)
    tiers = {
        engine: make_plan(
            PlanRequest(model=model, workload=work.replace(serving_engine=engine))
        ).cpu_tier.total_gib
        for engine in ("", "vllm", "lmcache", "sglang", "dynamo")
    }
    assert len(set(tiers.values())) == 1


def test_an_unknown_serving_engine_is_refused_by_name() -> None:
    with pytest.raises(SizingError) as err:
        MLA.replace(serving_engine="tgi").validate()
    assert err.value.field == "serving_engine"


def test_a_bundle_for_another_engine_warns_when_its_sockets_would_overflow() -> None:
    # The vLLM plan above buys 24 × 128 GB (1,536 GB per socket). vLLM pins its one copy
    # of the latent (536 GiB for the instance); SGLang keeps it on each of the 8 ranks
    # (4,289 GiB), more than either socket's DIMMs.
    plan = _plan("vllm")
    deployment = from_plan(plan)
    vllm_notes = " ".join(render(deployment, ["vllm"])[-1].notes)
    sglang_notes = " ".join(render(deployment, ["sglang"])[-1].notes)
    assert "would pin" not in vllm_notes
    assert "would pin" in sglang_notes
    assert pinned_bytes(deployment, "sglang") == 8 * pinned_bytes(deployment, "vllm")
