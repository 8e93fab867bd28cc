"""The performance model: work per token, prefill, decode, reload and TTFT."""

from __future__ import annotations

import pytest

from sizing.hardware import catalog
from sizing.model.architecture import conversation_bytes
from sizing.model.spec import from_catalog
from sizing.performance import (
    NoMeasuredBasis,
    decode,
    model_shape,
    prefill,
    prefill_ms,
    reload,
    returning_user,
    ttft_hit_ms,
    ttft_miss_ms,
)
from sizing.performance.shape import attention_pairs

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
SEED = "Qwen/Qwen3-32B-FP8"


def _shape(repo: str, kv_dtype: str = "auto"):  # type: ignore[no-untyped-def]
    return model_shape(from_catalog(repo), kv_dtype)


@pytest.mark.parametrize("repo", [SEED, "google/gemma-3-27b-it", "deepseek-ai/DeepSeek-V3",
                                  "Qwen/Qwen3-Next-80B-A3B-Instruct"])  # fmt: skip
@pytest.mark.parametrize("tp", [1, 2, 8])
def test_bytes_per_rank_are_the_architecture_figure(repo: str, tp: int) -> None:
    model = from_catalog(repo)
    shape = model_shape(model, "fp8")
    for tokens in (1, 4096, 131072):
        expected = conversation_bytes(model.architecture, "fp8", tokens, tp)
        assert shape.kv_bytes_per_rank(tokens, tp) == expected


def test_moe_counts_active_parameters() -> None:
    # DeepSeek-V3: 37 B activated per token including embeddings and the output head
    # (DeepSeek-V3 technical report); without them about 35.7 B.
    dsv3 = _shape("deepseek-ai/DeepSeek-V3")
    assert 34e9 < dsv3.active_params < 37e9
    # gpt-oss-120b: 5.1 B active including embeddings (OpenAI model card).
    oss = _shape("openai/gpt-oss-120b")
    assert 4.0e9 < oss.active_params < 5.1e9
    # A dense model multiplies every parameter but the embeddings: Llama-3.1-8B has
    # 8.03 B parameters, 1.05 B of them in the untied embedding and lm_head.
    assert _shape(LLAMA_8B).active_params == pytest.approx(6.98e9, rel=0.01)


def test_moe_prefill_is_far_below_the_total_parameter_figure() -> None:
    # gpt-oss-120b at 32K on H200: AIConfigurator estimates 978 ms; counting all
    # 117 B parameters gave 25,032 ms.
    oss = _shape("openai/gpt-oss-120b")
    t = prefill_ms(oss, gpu="h200-sxm", tp=1, new_tokens=32768)
    assert 978 * 0.5 < t < 978 * 1.5
    # DeepSeek-V3 on 8 × B200 at 8K: 3,199 ms with total parameters; with active
    # parameters a few hundred ms at most.
    dsv3 = _shape("deepseek-ai/DeepSeek-V3")
    assert prefill_ms(dsv3, gpu="b200", tp=8, new_tokens=8192) < 300


def test_attention_pairs_match_a_direct_count() -> None:
    for n, c, w in [(1, 0, None), (7, 5, None), (10, 0, 4), (10, 3, 4), (3, 20, 8), (50, 2, 16)]:
        direct = sum(min(c + i, w) if w else c + i for i in range(1, n + 1))
        assert attention_pairs(n, c, w) == direct


def test_prefill_reproduces_its_calibration_sweep() -> None:
    # vllm-blog-ttft-sweep (Llama-3.1-8B, H100, tokenization disabled): miss TTFT 260 ms
    # at 10K and 6,850 ms at 100K tokens; the fit reproduces them within 3 %.
    shape = _shape(LLAMA_8B)
    for tokens, measured in [(10_000, 260), (100_000, 6850)]:
        got = ttft_miss_ms(shape, gpu="h100-sxm", tp=1, prompt_tokens=tokens, tokenize=False)
        assert got == pytest.approx(measured, rel=0.03)


def test_prefill_grows_faster_than_linearly_and_with_the_cached_context() -> None:
    shape = _shape(LLAMA_8B)
    short = prefill(shape, gpu="h100-sxm", tp=1, new_tokens=10_000)
    long = prefill(shape, gpu="h100-sxm", tp=1, new_tokens=100_000)
    assert long.total_ms > 10 * short.total_ms
    assert long.attention_ms / long.linear_ms > short.attention_ms / short.linear_ms
    after = prefill(shape, gpu="h100-sxm", tp=1, new_tokens=1000, cached_tokens=99_000)
    alone = prefill(shape, gpu="h100-sxm", tp=1, new_tokens=1000)
    assert after.attention_ms > 50 * alone.attention_ms
    assert after.linear_ms == alone.linear_ms


def test_tensor_parallel_splits_compute_and_adds_communication() -> None:
    shape = _shape("Qwen/Qwen3-32B")
    one = prefill(shape, gpu="h100-sxm", tp=1, new_tokens=8192)
    four = prefill(shape, gpu="h100-sxm", tp=4, new_tokens=8192)
    assert one.communication_ms == 0
    assert four.communication_ms > 0
    assert four.linear_ms == pytest.approx(one.linear_ms / 4)
    # Without NVLink the all-reduces run over PCIe and cost more.
    pcie = prefill(shape, gpu="rtx-pro-6000-se", tp=4, new_tokens=8192)
    assert pcie.communication_ms > four.communication_ms


def test_cards_without_a_measurement_are_estimated_from_their_family_with_a_band() -> None:
    shape = _shape(LLAMA_8B)
    h100 = prefill(shape, gpu="h100-sxm", tp=1, new_tokens=1000)
    assert h100.basis.band_pct is None and h100.basis.note == ""
    # performance.json families: the L40S (Ada, no measured card) is estimated from the
    # Hopper class with the across-family band, ±56 % (0.916 / 0.589, band_fit).
    l40s = prefill(shape, gpu="l40s", tp=1, new_tokens=1000)
    assert l40s.basis.band_pct == 56
    assert l40s.basis.sources == ("vllm-blog-ttft-sweep",)
    assert l40s.basis.note == (
        "no single-request prefill measurement on NVIDIA L40S (Ada family): the efficiencies "
        "measured on H100 SXM are applied to its datasheet rates, ±56 %"
    )
    # The B200 is estimated from its own family's measured class (the RTX PRO 6000),
    # with the within-family band ±32 % (0.916 / 0.693, band_fit).
    b200 = prefill(shape, gpu="b200", tp=1, new_tokens=1000)
    assert b200.basis.band_pct == 32
    assert b200.basis.sources == ("prefill-rtx-pro-6000", "vllm-blog-ttft-sweep")
    assert "measured on RTX PRO 6000" in b200.basis.note
    low, high = l40s.basis.range_ms(l40s.total_ms) or (0.0, 0.0)
    assert low == pytest.approx(l40s.total_ms / 1.56)
    assert high == pytest.approx(l40s.total_ms * 1.56)


def test_every_catalog_gpu_gets_a_prefill_estimate() -> None:
    shape = _shape(LLAMA_8B)
    for slug in catalog.gpus():
        p = prefill(shape, gpu=slug, tp=1, new_tokens=8192)
        assert p.total_ms > 0, slug


def test_paths_without_a_measurement_are_refused() -> None:
    shape = _shape(LLAMA_8B)
    with pytest.raises(NoMeasuredBasis) as err:
        reload(shape, engine="vllm", tier="nvme", gpu="h100-sxm", tp=1, tokens=1000)
    assert err.value.field == "tier"
    assert err.value.code == "no_measured_basis"
    with pytest.raises(NoMeasuredBasis) as err:
        reload(shape, engine="trtllm", tier="cpu", gpu="h100-sxm", tp=1, tokens=1000)
    assert err.value.field == "engine"


def test_reload_is_fixed_cost_plus_bytes_over_the_effective_rate() -> None:
    # vllm-blog-ttft-sweep: 310 ms for a 100K-token CPU hit of Llama-3.1-8B (13.1 GB)
    # on one H100, i.e. about 42 GB/s effective, well below the 55.37 GB/s raw link.
    shape = _shape(LLAMA_8B)
    r = reload(shape, engine="vllm", tier="cpu", gpu="h100-sxm", tp=1, tokens=100_000)
    assert r.bytes_per_rank == 100_000 * 131_072
    assert 40 < r.effective_gbs < 46
    # Each TP rank copies its own share over its own link: TP 2 halves the bytes.
    r2 = reload(shape, engine="vllm", tier="cpu", gpu="h100-sxm", tp=2, tokens=100_000)
    assert r2.bytes_per_rank == r.bytes_per_rank // 2
    assert r2.transfer_ms == pytest.approx(r.transfer_ms / 2)
    # A GPU prefix-cache hit copies nothing.
    assert (
        reload(shape, engine="vllm", tier="gpu", gpu="h100-sxm", tp=1, tokens=100_000).transfer_ms
        == 0
    )


def test_hit_pays_the_new_tokens_over_the_cached_ones() -> None:
    shape = _shape(LLAMA_8B)
    whole = ttft_hit_ms(shape, engine="vllm", tier="cpu", gpu="h100-sxm", tp=1,
                        prompt_tokens=50_000, cached_tokens=49_999)  # fmt: skip
    part = ttft_hit_ms(shape, engine="vllm", tier="cpu", gpu="h100-sxm", tp=1,
                       prompt_tokens=50_000, cached_tokens=40_000)  # fmt: skip
    assert part > whole
    with pytest.raises(ValueError, match="cached_tokens"):
        ttft_hit_ms(shape, engine="vllm", tier="cpu", gpu="h100-sxm", tp=1,
                    prompt_tokens=100, cached_tokens=100)  # fmt: skip


def test_seed_returning_user_speedup_is_inside_the_measured_range() -> None:
    # The vLLM connector blog measured 2× to 22× lower TTFT from CPU hits; the seed
    # example (Qwen3-32B FP8, 8,192 tokens, RTX PRO 6000, TP 1) must land inside it.
    ru = returning_user(_shape(SEED, "fp8"), engine="vllm", gpu="rtx-pro-6000-se", tp=1,
                        context_tokens=8192)  # fmt: skip
    cpu = ru.tier("cpu")
    assert cpu.speedup is not None and 2 <= cpu.speedup <= 22
    gpu_hit = ru.tier("gpu")
    assert gpu_hit.ttft_ms is not None and cpu.ttft_ms is not None
    assert gpu_hit.ttft_ms < cpu.ttft_ms < ru.miss_ms
    nvme = ru.tier("nvme")
    assert nvme.hit is None and nvme.no_basis.startswith("no measured basis for")


def test_decode_is_memory_bound_at_small_batch_and_gains_throughput_with_batch() -> None:
    shape = _shape(SEED, "fp8")
    one = decode(shape, gpu="rtx-pro-6000-se", tp=1, batch=1, context_tokens=8192)
    many = decode(shape, gpu="rtx-pro-6000-se", tp=1, batch=64, context_tokens=8192)
    assert one.memory_bound
    # Batch 1 reads the 32 GiB of weights and 1 GiB of KV at 0.8 × 1,597 GB/s.
    assert one.tpot_ms == pytest.approx((shape.weights_bytes + 2**30) / (0.8 * 1597e9) * 1e3)
    assert many.tpot_ms > one.tpot_ms
    assert many.tokens_per_s_per_gpu > 10 * one.tokens_per_s_per_gpu


def test_limits_that_do_not_scale_with_tp_and_slow_tiers() -> None:
    shape = _shape(SEED, "fp8")
    kw = {"engine": "sglang", "gpu": "h100-sxm", "tokens": 32768}
    # sglang-26305-minimax-m27: SGLang's file tier read 7.1 GB/s for the whole instance,
    # so more ranks do not make it faster; EIC (sglang-eic-dsv4-h20) reads 0.57 GB/s per
    # rank, so TP 2 halves the time.
    one = reload(shape, tier="nvme", tp=1, **kw)  # type: ignore[arg-type]
    two = reload(shape, tier="nvme", tp=2, **kw)  # type: ignore[arg-type]
    assert two.transfer_ms == pytest.approx(one.transfer_ms)
    assert one.transfer_ms == pytest.approx(one.bytes_per_rank / 7.1e9 * 1e3)
    s1 = reload(shape, tier="shared", tp=1, **kw)  # type: ignore[arg-type]
    s2 = reload(shape, tier="shared", tp=2, **kw)  # type: ignore[arg-type]
    assert s2.transfer_ms == pytest.approx(s1.transfer_ms / 2)
    # A remote store at 0.57 GB/s per rank is slower than recomputing (docs/sizing.md §10).
    ru = returning_user(shape, engine="sglang", gpu="h100-sxm", tp=1, context_tokens=32768)
    assert ru.tier("shared").ttft_ms is not None and ru.tier("shared").ttft_ms > ru.miss_ms
    # SGLang's host tier has no measurement of its own: vLLM's measured path stands in,
    # with the band of that path's largest out-of-sample error (h20-cpu-1k, ±37 %,
    # performance.json estimated_paths), and says so.
    cpu = ru.tier("cpu")
    assert cpu.hit is not None and cpu.no_basis == ""
    assert cpu.hit.basis.band_pct == 37
    assert (
        "no SGLang HiCache hit from the CPU tier is measured: vLLM native offloading's "
        "measured path is applied, ±37 %"
    ) in cpu.hit.basis.note
    vllm = returning_user(shape, engine="vllm", gpu="h100-sxm", tp=1, context_tokens=32768)
    assert cpu.ttft_ms == pytest.approx(vllm.tier("cpu").ttft_ms)


def test_lmcache_cpu_hits_move_their_bytes_at_the_measured_share_of_the_link() -> None:
    # lmcache-1740-cpu-retrieve: 1.3747 GiB in 29.4664 ms, 0.905 of the 55.37 GB/s pinned
    # Gen5 rate (performance.json). 10,010 Qwen3-8B tokens of 147,456 B on one H100.
    shape = _shape("Qwen/Qwen3-8B")
    r = reload(shape, engine="lmcache", tier="cpu", gpu="h100-sxm", tp=1, tokens=10_010)
    assert r.bytes_per_rank == 10_010 * 147_456
    assert r.total_ms == pytest.approx(10_010 * 147_456 / (0.905 * 55.37e9) * 1e3)
    assert r.total_ms == pytest.approx(29.47, rel=0.01)
    assert r.basis.sources == ("lmcache-1740-cpu-retrieve",)


def test_a_hit_at_a_tp_no_measurement_was_taken_at_says_so() -> None:
    # The vLLM CPU-tier path was measured at TP 1 (vllm-blog-ttft-sweep): at TP 4 the
    # figure is still given, with a note that what a hit costs beyond its bytes at that TP
    # is not measured.
    shape = _shape(LLAMA_8B)
    one = reload(shape, engine="vllm", tier="cpu", gpu="h100-sxm", tp=1, tokens=10_000)
    four = reload(shape, engine="vllm", tier="cpu", gpu="h100-sxm", tp=4, tokens=10_000)
    assert "measured at TP" not in one.basis.note
    assert four.basis.note.startswith(
        "no vLLM native offloading hit from the CPU tier is measured at TP 4 (measured at TP 1)"
    )
    assert four.total_ms > 0
