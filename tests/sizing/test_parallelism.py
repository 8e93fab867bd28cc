"""The parallelism plan: TP, PP across nodes, EP, replicas and the binding constraint.

Expected values are computed from the bundled configs and checkpoint sizes
(``sizing/data/models.json``), the driver-reported memory of the cards
(``sizing/data/hardware.json``) and the seed's planning rule (0.9 × reported − 3 GiB −
weights per card); each test spells out its arithmetic.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.errors import InfeasibleError
from sizing.hardware.catalog import gpu
from sizing.layout.parallelism import pipeline_stages, replica_layout
from sizing.memory.gpu_budget import weights_per_gpu_gib
from sizing.model.architecture import conversation_bytes
from sizing.model.experts import expert_params, moe_layers
from sizing.model.spec import catalog_entry, catalog_ids, from_catalog
from sizing.plan.layout_choice import valid_tp_sizes
from sizing.plan.orchestrator import make_plan
from sizing.summary import plan_summary
from sizing.units import GIB
from tests.factories import plan_request


def plan(model: str, **kw: object):  # type: ignore[no-untyped-def]
    return make_plan(plan_request(model=from_catalog(model), **kw))  # type: ignore[arg-type]


def test_seed_layout_is_four_replicas_of_one_gpu_on_one_node() -> None:
    s = plan_summary(plan("Qwen/Qwen3-32B-FP8", context_tokens=8192, users=500))
    # Seed document: one copy per card, four cards, one node.
    assert s["layout"] == "4 replicas × 1 GPU (TP 1) = 4 GPUs"
    assert (s["nodes"], s["gpus_total"], s["pipeline_parallel_size"]) == (1, 4, 1)
    assert s["expert_parallel_size"] == 1 and s["data_parallel_size"] == 1


def test_tp_sizes_divide_attention_and_kv_heads() -> None:
    # Qwen3-32B config: 64 attention heads, 8 KV heads → every divisor of 8 GPUs.
    assert valid_tp_sizes(from_catalog("Qwen/Qwen3-32B").architecture, 8) == [1, 2, 4, 8]
    # Qwen2.5-7B config: 28 attention heads, 4 KV heads → TP 8 does not divide 28.
    arch = from_catalog("Qwen/Qwen2.5-7B-Instruct").architecture
    assert (arch.num_attention_heads, arch.num_kv_heads) == (28, 4)
    assert valid_tp_sizes(arch, 8) == [1, 2, 4]


def test_smallest_tp_that_holds_the_weights_the_rest_are_replicas() -> None:
    s = plan_summary(
        plan(
            "meta-llama/Llama-3.1-70B-Instruct",
            context_tokens=8192,
            users=1000,
            gpu="h200-sxm",
            gpus_per_node=8,
            kv_dtype="auto",
        )
    )
    # 131.4 GiB bf16 > 0.9 × 140.4 − 3 = 123.4 GiB usable: TP 1 fails, TP 2 holds it.
    assert s["layout"] == "4 replicas × 2 GPUs (TP 2) = 8 GPUs"
    # 0.9 × 140.4 − 3 − 131.42 / 2 = 57.65 GiB per card.
    assert s["kv_cache_gib_per_gpu"] == pytest.approx(57.65, abs=0.02)
    # Per card at TP 2: 80 layers × 4 KV heads × 128 × 2 × 2 B × 8,192 = 1.25 GiB.
    assert s["conversations_per_replica"] == 46  # ⌊57.65 / 1.25⌋
    assert s["conversations_on_gpus"] == 46 * 4  # per replica × replicas


def test_pipeline_stages_follow_vllm_layer_split() -> None:
    # vllm/distributed/utils.py::get_pp_indices: L // PP each, the remainder to the
    # stages before the last.
    assert pipeline_stages(61, 2) == [(0, 31), (31, 61)]
    assert pipeline_stages(10, 4) == [(0, 2), (2, 5), (5, 8), (8, 10)]
    assert pipeline_stages(64, 1) == [(0, 64)]
    with pytest.raises(ValueError):
        pipeline_stages(4, 5)


def test_pipeline_parallel_across_nodes_only_when_weights_force_it() -> None:
    p = plan(
        "deepseek-ai/DeepSeek-V3",
        context_tokens=8192,
        users=1000,
        gpu="h100-sxm",
        gpus_per_node=8,
        kv_dtype="auto",
    )
    s = plan_summary(p)
    # 641.3 GiB FP8 / 8 = 80.2 GiB per card > 0.9 × 79.65 − 3 = 68.7 GiB: two nodes.
    assert s["layout"] == "1 replica × 16 GPUs (TP 8 × PP 2) = 16 GPUs"
    assert (s["nodes"], s["gpus_total"], s["pipeline_parallel_size"]) == (2, 16, 2)
    assert s["weights_gib_per_gpu"] == pytest.approx(s["weights_gib"] / 16, abs=0.01)
    # The first stage holds 31 of 61 MLA layers: 31 × 576 × 2 B × 8,192 per card.
    assert p.parallelism.conversation_gib_per_gpu == pytest.approx(31 * 576 * 2 * 8192 / GIB)
    budget = 0.9 * 79.65 - 3 - s["weights_gib"] / 16
    assert s["conversations_per_replica"] == int(budget / (31 * 576 * 2 * 8192 / GIB))
    # More users than the GPUs hold add no node: they rest in the CPU tier (seed rule).
    assert s["resting_conversations"] == 1000 - s["conversations_on_gpus"]


def test_expert_parallel_spreads_only_the_experts() -> None:
    entry = catalog_entry("Qwen/Qwen3-30B-A3B")
    assert entry is not None
    # Config: 48 layers, all MoE, 128 experts × 3 × 2,048 × 768 each.
    assert moe_layers(entry["config"]) == 48
    assert expert_params(entry["config"]) == 48 * 128 * 3 * 2048 * 768
    kw = {"context_tokens": 8192, "users": 1000, "gpu": "l40s", "gpus_per_node": 4}
    plain = plan_summary(plan("Qwen/Qwen3-30B-A3B", **kw))
    ep = plan_summary(plan("Qwen/Qwen3-30B-A3B", expert_parallel=True, **kw))
    # Without EP: 56.9 GiB > 0.9 × 44.99 − 3 = 37.5 GiB usable, so TP 2.
    assert plain["layout"] == "2 replicas × 2 GPUs (TP 2) = 4 GPUs"
    # vLLM --enable-expert-parallel: EP = TP × DP = 4; experts / 4, the rest whole.
    experts_gib = 48 * 128 * 3 * 2048 * 768 * 2 / GIB
    dense_gib = ep["weights_gib"] - experts_gib
    assert ep["weights_gib_per_gpu"] == pytest.approx(dense_gib + experts_gib / 4, abs=0.01)
    assert ep["layout"] == "4 data-parallel ranks × 1 GPU (TP 1), experts over EP 4 = 4 GPUs"
    assert (ep["expert_parallel_size"], ep["data_parallel_size"]) == (4, 4)
    assert ep["conversations_on_gpus"] > plain["conversations_on_gpus"]


def test_expert_parallel_is_ignored_for_dense_models_and_says_so() -> None:
    s = plan("Qwen/Qwen3-32B-FP8", context_tokens=8192, users=500, expert_parallel=True)
    assert plan_summary(s)["layout"] == "4 replicas × 1 GPU (TP 1) = 4 GPUs"
    # Qwen3-32B's config names no routed experts (sizing/model/experts.py): the plan says why
    # the flag changed nothing.
    (note,) = [n for n in s.verdict.warning_notes if n.code == "no_experts"]
    assert note.text == (
        "Qwen/Qwen3-32B-FP8 has no routed experts: expert parallel applies to "
        "mixture-of-experts models only, so the plan is sized without it."
    )
    moe = plan("Qwen/Qwen3-30B-A3B", context_tokens=8192, users=500, expert_parallel=True)
    assert "no_experts" not in {n.code for n in moe.verdict.warning_notes}


def test_weights_per_gpu_rule() -> None:
    # Without EP the experts are split by TP like everything else: weights / (TP × PP).
    assert weights_per_gpu_gib(weights_gib=640, expert_weights_gib=600, tp=8, pp=2) == 40
    # With EP 8 at TP 1: dense 40 GiB whole, experts 600 / 8.
    assert weights_per_gpu_gib(weights_gib=640, expert_weights_gib=600, tp=1, ep=8) == 115
    with pytest.raises(ValueError):
        weights_per_gpu_gib(weights_gib=1, tp=0)


def test_weights_that_fit_nowhere_name_the_binding_constraint() -> None:
    with pytest.raises(InfeasibleError) as err:
        plan(
            "deepseek-ai/DeepSeek-V3",
            context_tokens=8192,
            users=10,
            gpu="l4",
            gpus_per_node=1,
        )
    # 641.3 GiB FP8 against 8 × (0.9 × 22.49 − 3) = 138 GiB over eight L4 nodes.
    assert err.value.field == "gpus_per_node"
    assert err.value.binding == "weights do not fit at this TP"
    assert "641.3 GiB" in err.value.message
    assert "4-bit weights (AWQ, GPTQ, NVFP4)" in err.value.fixes
    assert not any(fix.startswith("FP8 weights") for fix in err.value.fixes)  # already FP8


def test_a_conversation_that_does_not_fit_says_what_would_fix_it() -> None:
    with pytest.raises(InfeasibleError) as err:
        plan(
            "Qwen/Qwen3-32B-FP8",
            context_tokens=40960,
            users=10,
            gpu="l40s",
            gpus_per_node=1,
            kv_dtype="auto",
        )
    # 40,960 tokens × 256 KiB = 10 GiB against 0.9 × 44.99 − 3 − 31.9 = 5.55 GiB.
    assert err.value.field == "context_tokens"
    assert err.value.binding == "one max-length conversation does not fit"
    assert "10.00 GiB" in err.value.message and "5.55 GiB" in err.value.message
    fixes = " | ".join(err.value.fixes)
    assert "an FP8 KV cache" in fixes
    assert "a context of at most about 22,7" in fixes  # 40,960 × 5.55 / 10
    # Half the layers per node would hold it, but the planner splits layers over nodes
    # only for weights that do not fit one node (sizing/plan/layout_choice.py), so the refusal must
    # not suggest a layout the planner then refuses.
    assert "pipeline parallel" not in fixes and "two nodes" not in fixes
    assert "more GPUs per node" in fixes


MODELS = [m for m in catalog_ids() if catalog_entry(m).get("checkpoint_bytes")]  # type: ignore[union-attr]


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    gpu_slug=st.sampled_from(["rtx-pro-6000-se", "h200-sxm", "l40s", "h100-sxm"]),
    gpus=st.sampled_from([1, 2, 4, 8]),
    context=st.sampled_from([2048, 8192, 32768]),
    kv_dtype=st.sampled_from(["fp8", "auto"]),
    ep=st.booleans(),
)
def test_never_a_layout_that_cannot_hold_one_request(
    model: str, gpu_slug: str, gpus: int, context: int, kv_dtype: str, ep: bool
) -> None:
    spec = from_catalog(model)
    if spec.architecture.max_context_tokens and context > spec.architecture.max_context_tokens:
        context = spec.architecture.max_context_tokens
    request = plan_request(
        model=spec,
        context_tokens=context,
        users=100,
        gpu=gpu_slug,
        gpus_per_node=gpus,
        kv_dtype=kv_dtype,
        expert_parallel=ep,
    )
    try:
        p = make_plan(request).parallelism
    except InfeasibleError as exc:
        assert exc.binding and exc.fixes
        return
    # Known failures class 10: the pool of every card holds at least one conversation.
    assert p.conversations_per_replica >= 1
    assert p.kv_cache_gib_per_gpu >= p.conversation_gib_per_gpu > 0
    assert p.weights_gib_per_gpu + p.kv_cache_gib_per_gpu <= 0.9 * gpu(gpu_slug).reported_gib
    # The per-card conversation never exceeds the whole model's conversation.
    whole = conversation_bytes(spec.architecture, kv_dtype, context) / GIB
    assert p.conversation_gib_per_gpu <= whole + 1e-9
    # Replica arithmetic adds up: GPUs = TP × PP × replicas = GPUs per node × nodes.
    assert p.gpus == p.gpus_per_replica * p.total_replicas == gpus * p.nodes
    assert p.layout == replica_layout(
        gpus_total=p.gpus,
        tensor_parallel_size=p.tensor_parallel_size,
        pipeline_parallel_size=p.pipeline_parallel_size,
        expert_parallel_size=p.expert_parallel_size,
    )
