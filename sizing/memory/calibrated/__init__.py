"""Engine-calibrated KV-pool model: what vLLM or SGLang will allocate, per GPU.

The seed's planning rule (:mod:`sizing.memory.gpu_budget`) is the default for quotes; this model
follows the engines' own budget and page arithmetic (:mod:`.vllm`, :mod:`.sglang`,
:mod:`.pages`) and is what the verification and the ``accuracy`` command compare with
measured start-up logs.
"""

from __future__ import annotations

import dataclasses

from sizing.errors import SizingError
from sizing.memory.calibrated import pages, sglang, vllm
from sizing.memory.calibrated.setup import (
    EngineSetup,
    KvPoolPrediction,
    cuda_total_gib,
    pre_start_inputs,
    setup_from_case,
    versions_in_range,
)
from sizing.model.spec import ModelSpec
from sizing.units import GIB

__all__ = [
    "EngineSetup",
    "KvPoolPrediction",
    "cuda_total_gib",
    "pre_start_inputs",
    "predict",
    "setup_from_case",
    "tokens_for_kv_gib",
]


def _check(setup: EngineSetup) -> None:
    if setup.engine not in ("vllm", "sglang"):
        raise SizingError("engine", f"engine must be vllm or sglang, got {setup.engine!r}")
    if setup.gpu_total_memory_gib <= 0:
        raise SizingError("gpu_total_memory_gib", "the GPU's total memory must be positive")
    if setup.max_model_len <= 0:
        raise SizingError("max_model_len", "max_model_len must be positive")
    for name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
        if getattr(setup, name) < 1:
            raise SizingError(name, f"{name} must be at least 1")


def predict(model: ModelSpec, setup: EngineSetup) -> KvPoolPrediction:
    """Predict the KV pool one GPU of ``setup`` gets for ``model``.

    Args:
        model: the model (architecture and checkpoint size).
        setup: how the engine is started (pre-start inputs only).

    Returns:
        KV GiB, tokens, blocks and concurrency as the engine reports them, with the
        budget terms that led there. A negative KV GiB means the engine would not start.

    Raises:
        SizingError: naming a setup field out of range.

    A version range (``"~0.10.2-0.11"``) is predicted at both ends and at every version
    inside where a term changes (:data:`TERM_CHANGES`); when those differ, the result is
    the middle of the lowest and highest KV pool, and ``kv_cache_gib_band`` holds both.

    Sources: see :mod:`sizing.memory.calibrated.vllm`, :mod:`.sglang` and :mod:`.pages`.
    """
    _check(setup)
    first, last = setup.version_range
    if first == last:
        return _predict_one(model, setup)
    each = [
        _predict_one(model, dataclasses.replace(setup, engine_version=_dotted(v)))
        for v in versions_in_range(first, last, TERM_CHANGES)
    ]
    low = min(each, key=lambda p: p.kv_cache_gib)
    high = max(each, key=lambda p: p.kv_cache_gib)
    if high.kv_cache_gib - low.kv_cache_gib < 0.005:
        return each[-1]
    middle = (low.kv_cache_gib + high.kv_cache_gib) / 2
    near = min(each, key=lambda p: abs(p.kv_cache_gib - middle))
    tokens = round((low.kv_cache_tokens + high.kv_cache_tokens) / 2)
    return dataclasses.replace(
        near,
        kv_cache_gib=middle,
        kv_cache_tokens=tokens,
        max_concurrency=tokens / setup.max_model_len,
        kv_cache_gib_band=(low.kv_cache_gib, high.kv_cache_gib),
    )


TERM_CHANGES: tuple[tuple[int, ...], ...] = (
    vllm.V1_SINCE,
    vllm.FLASHINFER_SAMPLER_OPT_IN_SINCE,
    vllm.NON_TORCH_025_SINCE,
    vllm.TRITON_TOP_K_TOP_P_SINCE,
    vllm.CUDA_GRAPH_DEDUCTION_SINCE,
    vllm.ALLREDUCE_FUSION_ANY_PP_SINCE,
    vllm.UTILIZATION_092_SINCE,
    vllm.LARGE_GPU_BATCHED_SINCE,
    vllm.SMALL_GPU_1024_SEQS_SINCE,
    pages.CAPACITY_FORMULA_SINCE,
    pages.MAMBA_ALIGN_SINCE,
    sglang.RESERVED_FORMULA_SINCE,
)
"""Versions at which a term of the model changes (the modules' ``*_SINCE`` constants)."""


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def _predict_one(model: ModelSpec, setup: EngineSetup) -> KvPoolPrediction:
    """:func:`predict` for one version."""
    if setup.engine == "sglang":
        rest, weights = sglang.pool_bytes(model, setup)
        cell = sglang.cell_bytes(model, setup)
        tokens = max(0, int(rest // cell)) if cell else 0
        kv_bytes = tokens * cell
        return KvPoolPrediction(
            kv_cache_gib=kv_bytes / GIB if rest > 0 else rest / GIB,
            kv_cache_tokens=tokens,
            num_gpu_blocks=None,
            max_concurrency=tokens / setup.max_model_len,
            weights_gib=weights / GIB,
            activation_gib=0.0,
            non_torch_gib=0.0,
            cuda_graph_gib=0.0,
        )
    batched = vllm.default_batched_tokens(setup)
    weights = vllm.weights_bytes_per_gpu(model, setup)
    act = vllm.activation_bytes(model, setup, batched)
    non_torch = vllm.non_torch_bytes(setup)
    graphs = vllm.cuda_graph_bytes(setup)
    kv_bytes = vllm.requested_bytes(setup) - weights - act - non_torch - graphs
    layout = pages.vllm_layout(model, setup)
    blocks = pages.num_blocks(layout, kv_bytes)
    return KvPoolPrediction(
        kv_cache_gib=kv_bytes / GIB,
        kv_cache_tokens=pages.reported_tokens(layout, blocks, setup, batched),
        num_gpu_blocks=blocks,
        max_concurrency=pages.max_concurrency(layout, blocks, setup.max_model_len, batched),
        weights_gib=weights / GIB,
        activation_gib=act / GIB,
        non_torch_gib=non_torch / GIB,
        cuda_graph_gib=graphs / GIB,
        kv_cache_gib_band=vllm.quantized_band_gib(model, kv_bytes / GIB, graphs > 0),
    )


def tokens_for_kv_gib(model: ModelSpec, setup: EngineSetup, kv_cache_gib: float) -> int:
    """Tokens the engine reports for a KV pool of ``kv_cache_gib`` per GPU.

    This is the geometry half of :func:`predict` alone: given the logged "Available KV
    cache memory", it reproduces the logged token count (vLLM: blocks, groups, block
    rounding; SGLang: bytes // cell).

    Raises:
        SizingError: naming a setup field out of range.
    """
    _check(setup)
    kv_bytes = kv_cache_gib * GIB
    if setup.engine == "sglang":
        cell = sglang.cell_bytes(model, setup)
        return int(kv_bytes // cell) if cell else 0
    layout = pages.vllm_layout(model, setup)
    blocks = pages.num_blocks(layout, kv_bytes)
    return pages.reported_tokens(layout, blocks, setup, vllm.default_batched_tokens(setup))
