"""Each class of error in reference known_failures.md, with its concrete right value."""

from __future__ import annotations

import pytest

from configurator.modelhub.services import model_lookup
from sizing.errors import InfeasibleError
from sizing.layout.parallelism import replica_layout
from sizing.memory import vllm_buffer
from sizing.memory.calibrated import EngineSetup, predict, tokens_for_kv_gib
from sizing.model.architecture import LayerKind, conversation_bytes, kv_bytes_per_token
from sizing.model.checkpoint import weight_format
from sizing.model.config_reader import from_config
from sizing.model.spec import catalog_entry, from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.summary import plan_summary
from sizing.units import GB, GIB
from sizing.verdict import BINDING, decide
from tests.factories import plan_request
from tests.hubserver.server import RecordedHub

H100_V019 = EngineSetup("vllm", "0.19.0", 79.19, 8192, gpu_memory_utilization=0.95)
"""llm-d-planner accuracy sweep settings (ground-truth cases 002–059)."""


def test_1_head_size_from_config_not_hidden_size() -> None:
    # Seed document: Qwen3-32B FP8 cache = 131,072 B per token, 1 GiB per 8,192 tokens.
    arch = from_catalog("Qwen/Qwen3-32B").architecture
    assert kv_bytes_per_token(arch, "fp8") == 131_072
    assert conversation_bytes(arch, "fp8", 8192) == 2**30


def test_2_mla_from_config_fields_not_names() -> None:
    # Kimi-VL-A3B: DeepSeek-style text model inside a VL wrapper: 27 × 576 × 2 B.
    arch = from_catalog("moonshotai/Kimi-VL-A3B-Instruct").architecture
    assert arch.uses_mla
    assert kv_bytes_per_token(arch, "auto") == 27 * 576 * 2
    # A DeepSeek name without MLA fields is ordinary attention.
    plain = {**catalog_entry("Qwen/Qwen3-8B")["config"], "model_type": "deepseek_v3"}
    assert not from_config(plain).uses_mla


def test_3_sliding_window_layers_hold_their_window() -> None:
    # gemma-3-27b: 62 layers, 10 global and 52 sliding with window 1024.
    arch = from_catalog("google/gemma-3-27b-it").architecture
    assert (arch.count(LayerKind.FULL), arch.count(LayerKind.SLIDING)) == (10, 52)
    per_layer_token = 16 * 128 * 2 * 2  # config: 16 KV heads × 128, K and V, bf16
    expected = 32_768 * per_layer_token * 10 + 1024 * per_layer_token * 52
    assert conversation_bytes(arch, "auto", 32_768) == expected
    # gpt-oss-120b: alternating sliding (window 128) and full attention.
    oss = from_catalog("openai/gpt-oss-120b").architecture
    assert [layer.kind for layer in oss.layers[:2]] == [LayerKind.SLIDING, LayerKind.FULL]
    assert oss.layers[0].window_tokens == 128


def test_4_kv_dtype_counts() -> None:
    # Llama-3.1-8B, 1 × H100, vLLM 0.19: 476,016 tokens (auto), 952,032 (fp8) from
    # 58.11 GiB (llm-d-planner accuracy logs).
    model = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    auto = tokens_for_kv_gib(model, H100_V019, 58.11)
    fp8 = tokens_for_kv_gib(
        model, EngineSetup(**{**H100_V019.__dict__, "kv_cache_dtype": "fp8"}), 58.11
    )
    assert auto == pytest.approx(476_016, rel=0.001)
    assert fp8 == pytest.approx(952_032, rel=0.001)


def test_5_weight_dtype_from_quantization_config() -> None:
    # Qwen3-32B-FP8 says torch_dtype bfloat16; quantization_config says fp8.
    entry = catalog_entry("Qwen/Qwen3-32B-FP8")
    assert entry["config"].get("torch_dtype") == "bfloat16"
    assert weight_format(entry["config"]) == "fp8"
    # Runtime --quantization fp8: case-019 logged "Model loading took 8.49 GiB".
    setup = EngineSetup(**{**H100_V019.__dict__, "quantization": "fp8"})
    assert predict(from_catalog("meta-llama/Llama-3.1-8B-Instruct"), setup).weights_gib == (
        pytest.approx(8.49, abs=0.1)
    )


def test_6_weights_split_over_tensor_parallel_ranks() -> None:
    # Mixtral-8x7B at TP 2: "Model loading took 43.51 GiB" per GPU (case-035).
    setup = EngineSetup(**{**H100_V019.__dict__, "tensor_parallel_size": 2})
    pred = predict(from_catalog("mistralai/Mixtral-8x7B-Instruct-v0.1"), setup)
    assert pred.weights_gib == pytest.approx(43.51, abs=0.1)


def test_7_kv_heads_replicated_when_tp_exceeds_them() -> None:
    # Qwen3-235B-A22B: 4 KV heads; TP 8 keeps 1 head per rank, as TP 4 does.
    arch = from_catalog("Qwen/Qwen3-235B-A22B").architecture
    assert kv_bytes_per_token(arch, "auto", 8) == kv_bytes_per_token(arch, "auto", 4)
    assert kv_bytes_per_token(arch, "auto", 8) == 94 * 1 * 128 * 2 * 2


def test_8_mla_latent_not_divided_by_tp() -> None:
    # DeepSeek-V3: 61 × 576 × 2 B = 70,272 B per token at any TP (LMCache issue 2132).
    arch = from_catalog("deepseek-ai/DeepSeek-V3").architecture
    assert kv_bytes_per_token(arch, "bf16", 1) == kv_bytes_per_token(arch, "bf16", 8) == 70_272


def test_9_hybrid_models_only_attention_grows() -> None:
    # Qwen3-Next-80B: 12 full-attention and 36 linear-attention layers.
    arch = from_catalog("Qwen/Qwen3-Next-80B-A3B-Instruct").architecture
    assert (arch.count(LayerKind.FULL), arch.count(LayerKind.LINEAR)) == (12, 36)
    assert kv_bytes_per_token(arch, "auto") == 12 * 2 * 256 * 2 * 2


def test_10_no_plan_that_cannot_hold_one_request() -> None:
    # DeepSeek-V3 FP8 (641.3 GiB) cannot be held by one L4 per node even over eight
    # pipeline stages (8 × (0.9 × 22.49 − 3) = 138 GiB): the plan refuses and names the
    # binding constraint instead of proposing a layout.
    with pytest.raises(InfeasibleError) as err:
        make_plan(
            plan_request(
                model=from_catalog("deepseek-ai/DeepSeek-V3"),
                context_tokens=8192,
                users=10,
                gpu="l4",
                gpus_per_node=1,
            )
        )
    assert "weights" in err.value.binding
    assert err.value.fixes
    # Qwen3-235B bf16 (437.9 GiB) on one 96 GB card per node is held by six pipeline
    # stages, and each card still holds at least one conversation.
    p = make_plan(
        plan_request(
            model=from_catalog("Qwen/Qwen3-235B-A22B"),
            context_tokens=8192,
            users=10,
            gpus_per_node=1,
        )
    ).parallelism
    assert (p.pipeline_parallel_size, p.nodes) == (6, 6)
    assert p.conversations_per_replica >= 1


def test_10_engine_refuses_a_pool_below_one_request() -> None:
    # Qwen2.5-72B at TP 2 on H100 (case-043) leaves ~3 GiB: concurrency at 131,072
    # tokens is below one request.
    setup = EngineSetup(
        **{**H100_V019.__dict__, "tensor_parallel_size": 2, "max_model_len": 131_072}
    )
    assert predict(from_catalog("Qwen/Qwen2.5-72B-Instruct"), setup).max_concurrency < 1


def test_11_replica_arithmetic_spelled_out() -> None:
    # known_failures.md: "40 × H200, TP 8" must read "5 replicas × 8 GPUs".
    assert replica_layout(gpus_total=40, tensor_parallel_size=8).startswith("5 replicas × 8 GPUs")
    with pytest.raises(ValueError):
        replica_layout(gpus_total=40, tensor_parallel_size=16)  # 40 / 16 is no replica count
    # Llama-3.1-70B bf16 on 8 × H200 (131.4 GiB > 123.4 GiB usable at TP 1): TP 2.
    s = plan_summary(
        make_plan(
            plan_request(
                model=from_catalog("meta-llama/Llama-3.1-70B-Instruct"),
                context_tokens=8192,
                users=1000,
                gpu="h200-sxm",
                gpus_per_node=8,
                kv_dtype="auto",
            )
        )
    )
    assert s["layout"] == "4 replicas × 2 GPUs (TP 2) = 8 GPUs"
    # Concurrency per replica and in total are separate figures: 46 × 4 replicas.
    assert (s["conversations_per_replica"], s["conversations_on_gpus"]) == (46, 184)


def test_12_the_binding_constraint_is_named() -> None:
    # Weights do not fit at this TP (Qwen3-235B bf16 on one L40S per node, 8 nodes max).
    with pytest.raises(InfeasibleError) as err:
        make_plan(
            plan_request(
                model=from_catalog("Qwen/Qwen3-235B-A22B"),
                context_tokens=8192,
                users=1,
                gpu="l40s",
                gpus_per_node=1,
            )
        )
    assert err.value.binding == "weights do not fit at this TP"
    # The CPU tier is not larger than the GPU cache: Llama-3.1-8B bf16 at 131,072 tokens
    # (32 layers × 8 KV heads × 128 × 2 × 2 B = 128 KiB per token → 16 GiB) on 8 cards:
    # 0.9 × 95.59 − 3 − 14.96 = 68.07 GiB has room for 4.25 per card; 33 users over 8
    # instances are 4.125 each, fewer distinct conversations than that (seed planning
    # rule). A tier would only mirror the GPUs, so the plan names the constraint and sells
    # none: under traffic only about 1 % of returns would reach it (sizing.serving.benefit).
    mirror = make_plan(
        plan_request(
            model=from_catalog("meta-llama/Llama-3.1-8B-Instruct"),
            context_tokens=131_072,
            users=33,
            gpus_per_node=8,
            kv_dtype="auto",
        )
    )
    assert mirror.cpu_tier.per_instance_gib == 0.0
    assert not mirror.verdict.offload_pays
    assert mirror.cpu_tier.gpu_conversation_capacity == pytest.approx(68.07 / 16, abs=1e-3)
    assert BINDING["mirror"] in plan_summary(mirror)["binding_constraints"]
    # The NVMe drives wear out in N months: the verdict names it and the fix. (The NVMe
    # sizing picks drives whose DWPD covers the writes, so a plan never gets here.)
    worn = decide(
        users=500,
        conversations_on_gpus=204,
        reload_ms=19.0,
        recompute_ms=1600.0,
        tier_exceeds_gpu_cache=True,
        nvme_lifetime_years=2.0,
        active_users=150,
    )
    assert worn.binding == (BINDING["nvme"],)
    assert "24 months" in worn.warnings[0] and "3 DWPD" in worn.warnings[0]
    # GPU capacity for active users: 500 users all active at once, 204 resident (seed).
    busy = plan_summary(
        make_plan(
            plan_request(
                model=from_catalog("Qwen/Qwen3-32B-FP8"),
                context_tokens=8192,
                users=500,
                active_share=1.0,
            )
        )
    )
    assert BINDING["active"] in busy["binding_constraints"]


def test_13_units_per_engine_are_not_mixed() -> None:
    # engine_flags.md: vLLM --kv-offloading-size is GiB, cpu_bytes_to_use bytes, both for
    # the whole instance. Seed: 125 GiB per instance.
    buffer = vllm_buffer.offload(125.0)
    assert buffer is not None
    assert buffer.kv_offloading_size_gib == 125
    assert buffer.cpu_bytes_to_use == 125 * GIB == 134_217_728_000
    assert buffer.cpu_bytes_to_use != 125 * GB  # 125 GB would be 6.9 % short
    # The plan's tier in GB is the same bytes: 500 GiB ≈ 537 GB (sizing article).
    s = plan_summary(
        make_plan(
            plan_request(model=from_catalog("Qwen/Qwen3-32B-FP8"), context_tokens=8192, users=500)
        )
    )
    assert s["cpu_tier_total_gib"] == 500.0
    assert s["cpu_tier_total_gb"] == pytest.approx(536.9, abs=0.1)
    assert s["vllm_cpu_bytes_to_use"] == s["vllm_kv_offloading_size_gib"] * GIB


@pytest.mark.django_db
def test_14_safetensors_counted_once(hub: RecordedHub) -> None:
    # Mistral-7B-Instruct-v0.3 ships three shards and consolidated.safetensors: the
    # recorded Hub lists 4,949,453,792 + 4,999,819,336 + 4,546,807,800 B of shards and
    # a 14,496,078,512 B consolidated copy. The index's total_size (14,496,047,104 B,
    # the catalog's checkpoint_bytes) counts the weights once.
    resolved = model_lookup("mistralai/Mistral-7B-Instruct-v0.3", revision="v0.3")
    assert resolved.spec.weights_bytes == 14_496_047_104
    shards = 4_949_453_792 + 4_999_819_336 + 4_546_807_800
    # Summing every .safetensors file would double it (29.0 GB).
    assert resolved.spec.weights_bytes <= shards < 2 * resolved.spec.weights_bytes
    # The plan charges 13.5 GiB of weights, not 27 GiB.
    s = plan_summary(
        make_plan(plan_request(model=resolved.spec, context_tokens=8192, users=10, gpus_per_node=1))
    )
    assert s["weights_gib"] == pytest.approx(14_496_047_104 / GIB, abs=0.01)
