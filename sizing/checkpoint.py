"""Weight bytes of a model: from the checkpoint when known, else from the config.

The checkpoint's own size (the safetensors index's ``metadata.total_size``, counted
once) is the best figure: it is what the engine loads. When no size is known the
weights are estimated from the parameter count and the weight format that
``quantization_config`` states (never ``torch_dtype``, which FP8 checkpoints often leave
at ``bfloat16``).

Sources: Hugging Face safetensors index format; vLLM's "Model loading took X GiB" log
line measures the same bytes (reference ``vllm_memory_model.md`` §1.2).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sizing.architecture import text_config

WEIGHT_BITS: Mapping[str, float] = {
    "bf16": 16,
    "fp16": 16,
    "fp32": 32,
    "fp8": 8,
    "w8a8": 8,
    "int8": 8,
    "w4a16": 4,
    "awq": 4,
    "gptq": 4,
    "mxfp4": 4.25,
    "nvfp4": 4.5,
}
"""Bits per weight of each format, scales included (MXFP4: one 8-bit scale per 32
values; NVFP4: one FP8 scale per 16 values; OCP MX spec v1.0, NVIDIA NVFP4 note)."""


def weight_format(config: Mapping[str, Any]) -> str:
    """The checkpoint's weight format from ``quantization_config``, else ``torch_dtype``.

    Returns one of the keys of :data:`WEIGHT_BITS`.
    """
    cfg = text_config(config)
    quant = cfg.get("quantization_config") or config.get("quantization_config")
    if isinstance(quant, Mapping):
        method = str(quant.get("quant_method", "")).lower()
        if method in ("fp8", "fbgemm_fp8"):
            return "fp8"
        if method in ("mxfp4", "nvfp4", "awq", "gptq"):
            return method
        if method in ("compressed-tensors", "modelopt"):
            return _compressed_tensors_format(quant)
        bits = quant.get("bits")
        if bits == 4:
            return "w4a16"
        if bits == 8:
            return "int8"
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16").lower()
    return {"float16": "fp16", "float32": "fp32"}.get(dtype, "bf16")


def _compressed_tensors_format(quant: Mapping[str, Any]) -> str:
    groups = quant.get("config_groups") or {}
    for group in groups.values() if isinstance(groups, Mapping) else []:
        weights = group.get("weights") or {}
        bits = weights.get("num_bits")
        kind = str(weights.get("type", "")).lower()
        if bits == 4:
            return "nvfp4" if kind == "float" else "w4a16"
        if bits == 8:
            return "fp8" if kind == "float" else "w8a8"
    algo = str(quant.get("quant_algo", "")).lower()
    if "fp8" in algo:
        return "fp8"
    if "fp4" in algo:
        return "nvfp4"
    return "bf16"


def weights_bytes_from_params(total_params: int, fmt: str) -> int:
    """Estimated checkpoint bytes for ``total_params`` parameters stored as ``fmt``.

    Raises:
        ValueError: for an unknown format or a non-positive parameter count.
    """
    if total_params <= 0:
        raise ValueError(f"total_params must be positive, got {total_params}")
    try:
        bits = WEIGHT_BITS[fmt]
    except KeyError:
        raise ValueError(f"unknown weight format {fmt!r}") from None
    return round(total_params * bits / 8)
