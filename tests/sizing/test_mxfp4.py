"""MXFP4 experts (gpt-oss): what each vLLM backend loads beyond the checkpoint."""

from __future__ import annotations

import pytest

from sizing.memory.calibrated import mxfp4, predict
from sizing.memory.calibrated.setup import EngineSetup
from sizing.model.spec import from_catalog


def _h100(version: str, tp: int = 1) -> EngineSetup:
    return EngineSetup(
        engine="vllm",
        engine_version=version,
        gpu_total_memory_gib=79.19,
        max_model_len=8192,
        tensor_parallel_size=tp,
        gpu_type="H100 80GB",
    )


def test_triton_backend_holds_the_scales_twice_on_hopper() -> None:
    # vllm issue #33155 (v0.14.1, one H100, "Using Triton backend"): "Model loading took
    # 64.38 GiB" for gpt-oss-120b, against a 60.77 GiB checkpoint; the scales kept beside
    # their swizzled copies (3.34 GiB) and the fp32 biases explain all but 0.2 GiB.
    pred = predict(from_catalog("openai/gpt-oss-120b"), _h100("0.14.1"))
    assert mxfp4.backend(_h100("0.14.1")) == "triton"
    assert pred.weights_gib == pytest.approx(64.38, rel=0.005)


def test_marlin_backend_pads_on_hopper_before_0_11() -> None:
    # vllm issue #23278 (August 2025, v0.10.1, one H100, the Marlin FP4 warning):
    # "Model loading took 65.9651 GiB" for gpt-oss-120b.
    pred = predict(from_catalog("openai/gpt-oss-120b"), _h100("0.10.1"))
    assert mxfp4.backend(_h100("0.10.1")) == "marlin"
    assert pred.weights_gib == pytest.approx(65.9651, rel=0.005)


@pytest.mark.parametrize(
    ("gpu_type", "expected"),
    [("A100 80GB", "marlin"), ("RTX PRO 6000", "marlin"), ("H200", "triton"), ("B200", "triton")],
)
def test_backend_follows_the_compute_capability(gpu_type: str, expected: str) -> None:
    # get_mxfp4_backend (mxfp4.py): triton_kernels only on 9.0 <= capability < 11.0
    # (A100 8.0, RTX PRO 6000 12.0, H200 9.0, B200 10.0: NVIDIA datasheets).
    setup = EngineSetup("vllm", "0.19.0", 80.0, 8192, gpu_type=gpu_type)
    assert mxfp4.backend(setup) == expected


def test_other_formats_load_nothing_extra() -> None:
    assert mxfp4.extra_bytes_per_rank(from_catalog("Qwen/Qwen3-8B"), _h100("0.19.0")) == 0.0
