"""Memory-model terms follow the engine version ranges their evidence supports."""

from __future__ import annotations

import pytest

from sizing.memory.calibrated import predict, sglang, vllm
from sizing.memory.calibrated.setup import EngineSetup, setup_from_case
from sizing.model.spec import from_catalog
from sizing.units import GIB


def _vllm(version: str, **kw: object) -> EngineSetup:
    return EngineSetup(
        engine="vllm",
        engine_version=version,
        gpu_type="H100 80GB",
        gpu_total_memory_gib=79.19,
        max_model_len=8192,
        **kw,  # type: ignore[arg-type]
    )


def test_cuda_graphs_are_subtracted_from_0_21_unless_stated_off() -> None:
    # vllm/envs.py and vllm/v1/worker/gpu_worker.py (0.31.0 wheel): the estimate is
    # subtracted by default; a setup with graph profiling off keeps it (the post-0.21
    # logs of reference vllm_memory_model.md §1.2 without a deduction).
    assert vllm.cuda_graph_bytes(_vllm("0.31.0")) == 0.85 * GIB
    assert vllm.cuda_graph_bytes(_vllm("0.31.0", cuda_graph_profiling=False)) == 0
    assert vllm.cuda_graph_bytes(_vllm("0.19.0")) == 0
    model = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    off = predict(model, _vllm("0.31.0", cuda_graph_profiling=False))
    on = predict(model, _vllm("0.31.0"))
    assert off.kv_cache_gib - on.kv_cache_gib == pytest.approx(0.85)


def test_a_case_can_state_graph_profiling_before_start() -> None:
    case = {
        "engine": "vllm",
        "engine_version": "0.31.0",
        "gpu_type": "H100 80GB",
        "max_model_len": 8192,
        "cuda_graph_profiling": False,
    }
    assert setup_from_case(case).cuda_graph_profiling is False


@pytest.mark.parametrize(("tp", "fraction"), [(1, 0.88), (2, 0.87), (4, 0.85), (8, 0.81)])
def test_sglang_0_4_default_fraction_follows_the_tp_size(tp: int, fraction: float) -> None:
    # SGLang 0.4 server_args.py ServerArgs.__post_init__ (the SGLang docs log of about
    # 0.4.1 prints the 0.88 of TP 1: case-099).
    setup = EngineSetup(
        engine="sglang",
        engine_version="0.4.9",
        gpu_total_memory_gib=79.19,
        max_model_len=8192,
        tensor_parallel_size=tp,
    )
    assert sglang.default_mem_fraction_static(setup) == fraction


def test_sglang_0_5_reserves_memory_by_formula() -> None:
    # _handle_gpu_memory_settings (reference §3): 79.19 GiB = 85.0 GB, so chunked prefill
    # 8192 and graph batch 256; reserved 512 + 8192 × 1.5 + 256 × 2 + 1/8 × 1024 = 13,440
    # MiB (above the 10 GiB floor): (81,090.56 − 13,440) / 81,090.56 = 0.834.
    setup = EngineSetup(
        engine="sglang", engine_version="0.5.22", gpu_total_memory_gib=79.19, max_model_len=8192
    )
    assert sglang.default_mem_fraction_static(setup) == 0.834


def test_sglang_free_memory_before_load_follows_the_interconnect() -> None:
    # sgl-project/sglang PR #11716 (8 × H200, TP 8): "Load weight begin. avail mem=137.29
    # GB" on a 139.8 GiB card (SGLang GB are GiB); sglang issue #4760 (4 × L4, TP 4):
    # 21.63 GiB free of 22.49; the SGLang docs log (one H100): 78.81 of 79.19.
    def free_gib(total: float, tp: int, gpu_type: str) -> float:
        setup = EngineSetup(
            engine="sglang",
            engine_version="0.4.9",
            gpu_total_memory_gib=total,
            max_model_len=8192,
            tensor_parallel_size=tp,
            gpu_type=gpu_type,
        )
        return sglang.free_before_load_bytes(setup) / GIB

    assert free_gib(139.8, 8, "H200") == pytest.approx(137.29, abs=0.15)
    assert free_gib(22.49, 4, "L4 24GB") == pytest.approx(21.63, abs=0.01)
    assert free_gib(79.19, 1, "H100 80GB") == pytest.approx(78.81, abs=0.01)
