"""The engine-calibrated KV-pool model against real engine start-up logs."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources

import pytest

from sizing.errors import SizingError
from sizing.memory.calibrated import (
    EngineSetup,
    loaded,
    predict,
    setup_from_case,
    tokens_for_kv_gib,
    vllm,
)
from sizing.memory.calibrated.pages import vllm_layout
from sizing.model.spec import catalog_entry, from_catalog
from sizing.units import GIB


def _cases() -> list[dict]:
    text = resources.files("sizing").joinpath("data/ground_truth_cases.json").read_text("utf-8")
    return json.loads(text)["cases"]


CASES = {c["id"]: c for c in _cases()}
GEOMETRY_CASES = [
    c
    for c in _cases()
    if c["kv_cache_tokens"] and c["kv_cache_gib"] and catalog_entry(c["model_id"])
]


def _setup(case: dict) -> EngineSetup:
    model = from_catalog(case["model_id"])
    return setup_from_case(case, model.architecture.max_context_tokens)


@pytest.mark.parametrize("case", GEOMETRY_CASES, ids=lambda c: c["id"])
def test_geometry_reproduces_logged_tokens(case: dict) -> None:
    # Given the logged "Available KV cache memory" (2-decimal GiB), the predicted token
    # count must match the logged "GPU KV cache size" (ground_truth_cases.json, per case).
    model = from_catalog(case["model_id"])
    # The geometry does not use the GPU total; some logs do not state it.
    setup = _setup(dict(case, gpu_total_memory_gib=case["gpu_total_memory_gib"] or 80.0))
    logged = case["kv_cache_tokens"]
    predicted = tokens_for_kv_gib(model, setup, case["kv_cache_gib"])
    # The log rounds GiB to 2 decimals: any value in [x - 0.005, x + 0.005] is the log.
    low = tokens_for_kv_gib(model, setup, case["kv_cache_gib"] - 0.005)
    high = tokens_for_kv_gib(model, setup, case["kv_cache_gib"] + 0.005)
    ranks = setup.tensor_parallel_size * setup.pipeline_parallel_size
    if low <= logged <= high or abs(predicted / logged - 1) <= 0.001:
        return
    # With several ranks vLLM uses the minimum block count over ranks while the log's
    # memory line is one rank's (vllm_memory_model.md §1.3): allow that spread.
    assert ranks > 1, f"{case['id']}: predicted {predicted:,} tokens, logged {logged:,}"
    assert abs(predicted / logged - 1) <= 0.015


def test_llama_8b_kv_pool_on_h100_matches_the_log() -> None:
    # case-024: vLLM 0.19, H100, util 0.95, 8192 tokens: 58.11 GiB, 476,016 tokens,
    # 29,751 blocks, concurrency 58.11 (llm-d-planner accuracy logs).
    pred = predict(from_catalog("meta-llama/Llama-3.1-8B-Instruct"), _setup(CASES["case-024"]))
    assert pred.kv_cache_gib == pytest.approx(58.11, rel=0.005)
    assert pred.kv_cache_tokens == pytest.approx(476_016, rel=0.005)
    assert pred.num_gpu_blocks == pytest.approx(29_751, rel=0.005)
    assert pred.max_concurrency == pytest.approx(58.11, rel=0.005)
    assert pred.cuda_graph_gib == 0  # v0.19 printed the estimate but did not subtract it


def test_fp8_kv_cache_doubles_tokens() -> None:
    # case-017: the same pool with --kv-cache-dtype fp8 holds 952,032 tokens.
    pred = predict(from_catalog("meta-llama/Llama-3.1-8B-Instruct"), _setup(CASES["case-017"]))
    assert pred.kv_cache_tokens == pytest.approx(952_032, rel=0.005)


def test_runtime_fp8_quantization_shrinks_weights() -> None:
    # case-019: --quantization fp8 on the bf16 checkpoint: "Model loading took 8.49 GiB".
    pred = predict(from_catalog("meta-llama/Llama-3.1-8B-Instruct"), _setup(CASES["case-019"]))
    assert pred.weights_gib == pytest.approx(8.49, abs=0.1)


def test_sglang_pool_from_mem_fraction_static() -> None:
    # case-099 (SGLang docs log): mem_fraction_static 0.88, 54.26 GiB, 444,500 tokens.
    pred = predict(from_catalog("meta-llama/Meta-Llama-3.1-8B-Instruct"), _setup(CASES["case-099"]))
    assert pred.kv_cache_gib == pytest.approx(54.26, rel=0.01)
    assert pred.kv_cache_tokens == pytest.approx(444_500, rel=0.01)


@pytest.mark.parametrize(
    ("case_id", "groups"),
    [("case-006", 2), ("case-031", 4), ("case-040", 2)],
)
def test_hybrid_group_count(case_id: str, groups: int) -> None:
    # kv_cache_groups logged in ground_truth_cases.json (gemma-2-27b, Llama-4-Scout TP4,
    # gpt-oss-20b TP2).
    case = CASES[case_id]
    layout = vllm_layout(from_catalog(case["model_id"]), _setup(case))
    assert layout.num_groups == groups


def test_gemma_3_12b_has_six_groups() -> None:
    # vllm_memory_model.md §2.6: gemma-3-12b, 6 groups (5 sliding + 1 full) of 8 layers.
    setup = EngineSetup("vllm", "0.19.0", 79.19, 8192, gpu_memory_utilization=0.95)
    layout = vllm_layout(from_catalog("google/gemma-3-12b-it"), setup)
    assert (layout.num_groups, layout.group_size) == (6, 8)


def test_qwen3_next_hybrid_block_is_544_tokens_at_tp2() -> None:
    # vllm_memory_model.md §2.4: "Setting attention block size to 544 tokens",
    # "Padding mamba page size by 1.49%" for Qwen3-Next-80B at TP 2.
    setup = EngineSetup("vllm", "0.19.0", 79.19, 8192, tensor_parallel_size=2)
    model = from_catalog("Qwen/Qwen3-Next-80B-A3B-Instruct")
    layout = vllm_layout(model, setup)
    assert layout.block_size == 544
    state = next(layer for layer in model.architecture.layers if layer.state).state_bytes(2, 2)
    assert (layout.page_bytes / state - 1) * 100 == pytest.approx(1.49, abs=0.01)


def test_setup_from_case_ignores_measured_fields() -> None:
    # Changing every measured figure must not change the prediction.
    case = dict(CASES["case-024"])
    before = predict(from_catalog(case["model_id"]), _setup(case))
    for key in ("weights_gib", "activation_peak_gib", "non_torch_gib", "kv_cache_gib",
                "kv_cache_tokens", "num_gpu_blocks", "free_at_start_gib"):  # fmt: skip
        case[key] = 1.0
    assert predict(from_catalog(case["model_id"]), _setup(case)) == before


def test_unknown_gpu_without_total_is_a_named_error() -> None:
    case = dict(CASES["case-024"], gpu_total_memory_gib=None, gpu_type="Mystery 12GB")
    with pytest.raises(SizingError) as err:
        setup_from_case(case)
    assert err.value.field == "gpu_total_memory_gib"


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("0.19.0", (0, 19, 0), (0, 19, 0)),
        # "0.11" at the open end of a range stands for every 0.11 patch
        ("~0.10.2-0.11 (vllm/vllm-openai:latest, late 2025; not stated)", (0, 10, 2), (0, 11, 99)),
        ("~0.9.2/0.10.0 (July 2025)", (0, 9, 2), (0, 10, 0)),
        ("~0.6.4 (V0 engine, Dec 2024)", (0, 6, 4), (0, 6, 4)),
        ("no version", (0,), (0,)),
    ],
)
def test_version_ranges_keep_both_ends(text: str, first: tuple, last: tuple) -> None:
    from sizing.memory.calibrated.setup import parse_version_range

    assert parse_version_range(text) == (first, last)


def test_a_range_across_the_sampler_change_is_predicted_as_its_band() -> None:
    """case-076's build "~0.10.2-0.11" spans v0.11.1, where vLLM's FlashInfer sampler became
    opt-in (topk_topp_sampler.py, 0.11.0 against 0.11.1 wheels): the two ends differ by the
    sampler's peak, 3.62e-5 − 1.3827e-5 GiB per vocabulary entry (151,936 for Qwen3-32B)."""
    from sizing.memory.calibrated import predict
    from sizing.memory.calibrated.setup import EngineSetup
    from sizing.model.spec import from_catalog

    model = from_catalog("Qwen/Qwen3-32B")
    base = dict(
        engine="vllm",
        gpu_total_memory_gib=79.18,
        max_model_len=16000,
        gpu_memory_utilization=0.9,
        block_size=128,
        gpu_type="H100 80GB",
    )
    ranged = predict(model, EngineSetup(engine_version="~0.10.2-0.11", **base))
    light = predict(model, EngineSetup(engine_version="0.11.0", **base))
    heavy = predict(model, EngineSetup(engine_version="0.11.1", **base))
    assert ranged.kv_cache_gib_band == pytest.approx((heavy.kv_cache_gib, light.kv_cache_gib))
    assert light.kv_cache_gib - heavy.kv_cache_gib == pytest.approx(
        (3.62e-5 - 1.3827e-5) * 151_936, abs=0.01
    )
    assert ranged.kv_cache_gib == pytest.approx((light.kv_cache_gib + heavy.kv_cache_gib) / 2)
    one = predict(model, EngineSetup(engine_version="0.11.2", **base))
    assert one.kv_cache_gib_band is None


def test_the_profile_peak_follows_the_samplers_top_k_top_p_path() -> None:
    # llm-d-benchmark empirical-vllm-memory-results.md: Llama-3.1-8B on H100 peaked at
    # 4.76 GiB on a v0.11-era image (PyTorch's sort: FlashInfer's sampler is opt-in from
    # v0.11.1, topk_topp_sampler.py); 1.89 GiB on v0.19 with the Triton kernel (case-024).
    model = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    v0111 = predict(model, EngineSetup("vllm", "0.11.1", 79.18, 16000, block_size=128))
    v019 = predict(model, EngineSetup("vllm", "0.19.0", 79.19, 8192))
    assert v0111.activation_gib == pytest.approx(4.76, rel=0.02)
    assert v019.activation_gib == pytest.approx(1.89, rel=0.02)
    # up to v0.11.0 FlashInfer's sampler runs when installed (the default taken) ...
    v0110 = predict(model, EngineSetup("vllm", "0.11.0", 79.18, 16000))
    assert v0110.activation_gib == pytest.approx(1.89, rel=0.02)
    # ... and a build without it sorts
    pip = predict(model, EngineSetup("vllm", "0.11.0", 79.18, 16000, sort_sampler=True))
    assert pip.activation_gib == pytest.approx(4.76, rel=0.02)
    # from v0.17 the Triton kernel runs whatever the setup says of FlashInfer
    v017 = predict(model, EngineSetup("vllm", "0.17.0", 79.19, 8192, sort_sampler=True))
    assert v017.activation_gib == pytest.approx(1.89, rel=0.02)


def test_qwen3_32b_v011_era_kv_pool_matches_the_log() -> None:
    # case-076 (llm-d-benchmark empirical-vllm-memory-results.md): Qwen3-32B on one
    # H100, util 0.9, a "~0.10.2-0.11" image whose logged 5.64 GiB of activation is the
    # sort path's: 4.45 GiB of KV cache.
    setup = dataclasses.replace(_setup(CASES["case-076"]), sort_sampler=True)
    pred = predict(from_catalog("Qwen/Qwen3-32B"), setup)
    assert pred.activation_gib == pytest.approx(5.64, rel=0.02)
    assert pred.kv_cache_gib == pytest.approx(4.45, rel=0.05)


def test_tensor_parallel_non_torch_depends_on_the_interconnect() -> None:
    # v0.19 H100 (NVSwitch) logs: about 2.1 GiB per GPU at TP >= 2 (case-051: 2.13);
    # v0.10.2 L40S TP 8 (PCIe): 0.21 GiB (case-080).
    model = from_catalog("Qwen/Qwen2.5-7B-Instruct")
    h100 = predict(model, EngineSetup("vllm", "0.19.0", 79.19, 8192, tensor_parallel_size=4))
    l40s = EngineSetup("vllm", "0.10.2", 44.42, 8192, tensor_parallel_size=4, gpu_type="L40S")
    assert h100.non_torch_gib == pytest.approx(2.13, abs=0.05)
    assert predict(model, l40s).non_torch_gib == pytest.approx(0.21, abs=0.01)


def test_mxfp4_marlin_padding_on_a100() -> None:
    # case-070 (dennislee22/vLLM-benchmarking, v0.10.1.1): gpt-oss-120b TP 4 on A100
    # loaded 17.2217 GiB per GPU; Marlin pads 720 → 768 and 2880 → 3072 (mxfp4.py).
    pred = predict(from_catalog("openai/gpt-oss-120b"), _setup(CASES["case-070"]))
    assert pred.weights_gib == pytest.approx(17.2217, rel=0.01)


def test_rotary_table_is_loaded_on_every_rank() -> None:
    # RotaryEmbedding keeps max_position_embeddings × rotary_dim values in the serving
    # dtype (config.json: Llama-3.1-8B 131,072 × 128; Llama-4-Scout 10,485,760 × 128).
    llama = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    scout = from_catalog("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert loaded.rope_cache_bytes(llama) == 131_072 * 128 * 2
    assert loaded.rope_cache_bytes(llama, "float32") == 131_072 * 128 * 4
    assert loaded.rope_cache_bytes(scout) == 10_485_760 * 128 * 2  # 2.5 GiB


@pytest.mark.parametrize(
    ("case_id", "logged_weights_gib"),
    [
        ("case-024", 14.99),  # Llama-3.1-8B, "Model loading took 14.99 GiB" (0.19 log)
        ("case-021", 29.98),  # the same at --dtype float32 (0.19 log)
        ("case-031", 53.12),  # Llama-4-Scout TP 4, per GPU (0.19 log)
        ("case-080", 27.7183),  # Qwen3-235B-2507-FP8 TP 8 + EP on L40S (0.10.2 log)
    ],
)
def test_loaded_weights_match_the_log(case_id: str, logged_weights_gib: float) -> None:
    case = CASES[case_id]
    pred = predict(from_catalog(case["model_id"]), _setup(case))
    assert pred.weights_gib == pytest.approx(logged_weights_gib, abs=0.03)


def test_kv_projection_replicated_when_tp_exceeds_kv_heads() -> None:
    # Qwen3-235B (config.json: 94 layers, 4 KV heads × 128, hidden 4096, FP8 checkpoint):
    # at TP 8 a rank keeps one whole head, 1/4 of k/v instead of 1/8; none at TP 4.
    model = from_catalog("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8")
    per_head = 2 * 128 * 4096 * 1
    assert loaded.replicated_kv_projection_bytes(model, 8) == pytest.approx(
        94 * per_head * (1 - 4 / 8)
    )
    assert loaded.replicated_kv_projection_bytes(model, 4) == 0


@pytest.mark.parametrize(
    ("case_id", "logged_peak_torch_gib"),
    [("case-090", 17.06), ("case-091", 17.98)],  # vllm issue #10517, V0 profiler lines
)
def test_v0_profile_peak_grows_with_max_model_len(
    case_id: str, logged_peak_torch_gib: float
) -> None:
    case = CASES[case_id]
    pred = predict(from_catalog(case["model_id"]), _setup(case))
    assert pred.weights_gib + pred.activation_gib == pytest.approx(logged_peak_torch_gib, abs=0.03)
    assert pred.kv_cache_gib == pytest.approx(case["kv_cache_gib"], rel=0.02)


def test_v0_long_context_profiles_the_chunked_prefill_budget() -> None:
    # vllm issue #10517: the same reporter's 35k and 45k runs peak at 15.05 GiB, weights
    # (14.99 GiB) plus the 512-token chunked-prefill profile.
    model = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    for max_len in (35_000, 45_000):
        pred = predict(model, EngineSetup("vllm", "0.6.4", 23.58, max_len, gpu_type="RTX 3090"))
        assert pred.weights_gib + pred.activation_gib == pytest.approx(15.05, abs=0.03)


def test_tensor_parallel_non_torch_follows_the_all_reduce_fusion() -> None:
    # FlashInfer's all-reduce + RMSNorm fusion is on from v0.17 at TP > 1 on Hopper and
    # Blackwell (enable_allreduce_rms_fusion, vllm/config/vllm.py): 2.1 GiB per GPU in the
    # v0.19 H100 logs (case-051: 2.13). Without it an H100 SXM server at TP 2 holds about
    # 0.55 GiB (llm-d-benchmark, Llama-3.3-70B-FP8, a v0.11-era image); PCIe cards of
    # compute capability 8.x 0.21 GiB at any version (case-080, L40S TP 8).
    h100 = dict(gpu_total_memory_gib=79.19, max_model_len=8192, tensor_parallel_size=2)
    fused = EngineSetup("vllm", "0.19.0", gpu_type="H100 80GB", **h100)
    before = EngineSetup("vllm", "0.16.0", gpu_type="H100 80GB", **h100)
    l40s = EngineSetup("vllm", "0.19.0", 44.42, 8192, tensor_parallel_size=8, gpu_type="L40S")
    pp2 = EngineSetup("vllm", "0.19.0", gpu_type="H100 80GB", pipeline_parallel_size=2, **h100)
    assert vllm.non_torch_bytes(fused) / GIB == pytest.approx(2.1)
    assert vllm.non_torch_bytes(before) / GIB == pytest.approx(0.55)
    assert vllm.non_torch_bytes(l40s) / GIB == pytest.approx(0.21)
    # before v0.21 the fusion was off with PP > 1 (vllm/config/vllm.py, 0.20.0 wheel)
    assert vllm.non_torch_bytes(pp2) / GIB == pytest.approx(0.55)
    later = dataclasses.replace(pp2, engine_version="0.21.0")
    assert vllm.non_torch_bytes(later) / GIB == pytest.approx(2.1)


def test_cuda_graph_estimate_is_subtracted_from_the_0_20_wheel() -> None:
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "0" in the 0.19.0 wheel's
    # vllm/envs.py and to "1" in the 0.20.0 wheel's; --enforce-eager (stated as profiling
    # off) skips it.
    base = dict(gpu_total_memory_gib=79.19, max_model_len=8192)
    assert vllm.cuda_graph_bytes(EngineSetup("vllm", "0.19.0", **base)) == 0
    assert vllm.cuda_graph_bytes(EngineSetup("vllm", "0.20.0", **base)) / GIB == 0.85
    off = EngineSetup("vllm", "0.27.1", cuda_graph_profiling=False, **base)
    assert vllm.cuda_graph_bytes(off) == 0


def test_a_4_bit_checkpoint_carries_its_stated_band() -> None:
    # AWQ/GPTQ: the activation and graph rules hold with a band of ±0.5 and ±0.4 GiB
    # (a 0.26.0 AWQ log on a 16 GB card: 0.55 GiB of activation and 0.48 GiB of graphs);
    # before the 0.20 wheel no graph estimate is subtracted, so only the activation band.
    model = from_catalog("Qwen/Qwen2.5-7B-Instruct-AWQ")
    new = predict(model, EngineSetup("vllm", "0.26.0", 23.99, 4096, gpu_type="RTX 4090"))
    old = predict(model, EngineSetup("vllm", "0.19.0", 23.99, 4096, gpu_type="RTX 4090"))
    assert new.kv_cache_gib_band == pytest.approx((new.kv_cache_gib - 0.9, new.kv_cache_gib + 0.9))
    assert old.kv_cache_gib_band == pytest.approx((old.kv_cache_gib - 0.5, old.kv_cache_gib + 0.5))
    bf16 = predict(
        from_catalog("Qwen/Qwen2.5-7B-Instruct"), EngineSetup("vllm", "0.26.0", 79.19, 4096)
    )
    assert bf16.kv_cache_gib_band is None


def test_the_fused_moe_scratch_scales_with_the_batched_tokens() -> None:
    # fused_moe.py's intermediate caches are tokens × top_k × N: the 0.45 GiB fitted at
    # 8192 tokens (the v0.19 sweep's MoE logs) is a quarter at an A100's 2048 tokens.
    moe = from_catalog("Qwen/Qwen3-30B-A3B")
    dense = from_catalog("Qwen/Qwen3-8B")
    setup = EngineSetup("vllm", "0.19.0", 79.19, 8192)
    for tokens, share in ((8192, 1.0), (2048, 0.25)):
        s = dataclasses.replace(setup, max_num_batched_tokens=tokens, max_num_seqs=1024)
        extra = vllm.activation_bytes(moe, s, tokens) - vllm.activation_bytes(dense, s, tokens)
        hidden = (2048 - 4096) * 1.8e-5 * tokens / 8192 * GIB  # Qwen3-30B-A3B 2048, 8B 4096
        assert (extra - hidden) / GIB == pytest.approx(0.45 * share, abs=1e-6)
