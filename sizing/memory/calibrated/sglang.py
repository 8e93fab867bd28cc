"""SGLang's static memory pool and its token count.

``rest = free_after_load − free_before_load × (1 − mem_fraction_static)``, and
``max_total_num_tokens = rest // cell`` with ``cell`` the bytes of one token over all
attention layers on one rank (reference ``vllm_memory_model.md`` §3, from
``python/sglang/srt/model_executor/pool_configurator.py`` and ``server_args.py``).

- Free memory before load is the CUDA total less the CUDA context, 0.38 GiB (SGLang docs
  log: 78.81 GiB free on an 80 GB card reporting 79.19), and at TP ≥ 2 less what torch
  distributed init takes per rank (NCCL, custom all-reduce), which depends on the
  interconnect as vLLM's non-torch memory does (:mod:`sizing.memory.calibrated.vllm`): 2.01 GiB
  on NVSwitch servers (sgl-project/sglang PR #11716, 8 × H200: "Init torch distributed
  ends. mem usage=2.01 GB", then 137.29 free of 139.8), 0.48 GiB on PCIe cards
  (sglang issue #4760: 21.63 free on a 22.49 GiB L4 at TP 4, less the context). An
  unknown GPU is taken as PCIe.
- Free memory after load is that less the weights over the TP ranks.
- Default ``mem_fraction_static``, by version:
  - before 0.5: by the TP size alone, 0.88 (TP 1), 0.87 (TP 2), 0.85 (TP 4), 0.81
    (TP 8), 0.79 (TP 16) (``ServerArgs.__post_init__`` of the 0.4 line, ``server_args.py``;
    the cases are the SGLang docs log of about 0.4.1 and the 0.4.9 issue log, case-099
    and case-094);
  - from 0.5: ``(gpu − reserved) / gpu`` with ``reserved_mb = 512 + max(chunked_prefill,
    2048) × 1.5 + cuda_graph_max_bs × 2 + tp × pp / 8 × 1024``, at least 10 GiB above 60
    GB (``_handle_gpu_memory_settings``, reference §3; no shipped log of this line).
- Hybrid sliding-window models give the windowed layers 0.8 of the full pool
  (``swa_full_tokens_ratio``).
"""

from __future__ import annotations

from sizing.memory.calibrated.pages import kv_value_bytes
from sizing.memory.calibrated.setup import EngineSetup
from sizing.model.architecture import ATTENTION_KINDS, WINDOWED_KINDS
from sizing.model.spec import ModelSpec
from sizing.units import GIB

SWA_FULL_TOKENS_RATIO = 0.8


def _chunk_and_graph_bs(gpu_gb: float, tp: int) -> tuple[int, int]:
    if gpu_gb < 20:
        return 2048, 8
    if gpu_gb < 35:
        return 2048, 80 if tp >= 4 else 24
    if gpu_gb < 60:
        return 4096, 160 if tp >= 4 else 32
    if gpu_gb < 160:
        return 8192, 512 if tp >= 4 else 256
    return 16384, 512


RESERVED_FORMULA_SINCE = (0, 5)
"""First SGLang line whose default ``mem_fraction_static`` reserves memory by formula."""
TP_TABLE_FRACTIONS = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
"""Before 0.5: (smallest TP size, ``mem_fraction_static``), largest TP first."""


def default_mem_fraction_static(setup: EngineSetup) -> float:
    """SGLang's default ``mem_fraction_static`` for the version, GPU size and
    parallelism (module docstring)."""
    if setup.version < RESERVED_FORMULA_SINCE:
        ranks = setup.tensor_parallel_size
        return next(f for size, f in TP_TABLE_FRACTIONS if ranks >= size)
    gpu_mb = setup.gpu_total_memory_gib * 1024
    chunk, graph_bs = _chunk_and_graph_bs(gpu_mb / 1024 * GIB / 1e9, setup.tensor_parallel_size)
    reserved = 512 + max(chunk, 2048) * 1.5 + graph_bs * 2
    reserved += setup.tensor_parallel_size * setup.pipeline_parallel_size / 8 * 1024
    if gpu_mb * 2**20 / 1e9 > 60:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mb - reserved) / gpu_mb, 3)


CONTEXT_GIB = 0.38
DISTRIBUTED_NVSWITCH_GIB = 2.01
DISTRIBUTED_PCIE_GIB = 0.48


def free_before_load_bytes(setup: EngineSetup) -> float:
    """Free memory per GPU after distributed init, before weights load (module
    docstring)."""
    overhead = CONTEXT_GIB
    if setup.tensor_parallel_size * setup.pipeline_parallel_size > 1:
        cls = setup.gpu_class
        nvswitch = cls is not None and cls.nvswitch
        overhead += DISTRIBUTED_NVSWITCH_GIB if nvswitch else DISTRIBUTED_PCIE_GIB
    return (setup.gpu_total_memory_gib - overhead) * GIB


def cell_bytes(model: ModelSpec, setup: EngineSetup) -> float:
    """Bytes one token takes over the attention layers of one rank."""
    value = kv_value_bytes(model, setup)
    tp = setup.tensor_parallel_size
    total = 0.0
    for layer in model.architecture.layers:
        if layer.kind not in ATTENTION_KINDS:
            continue
        per_token = float(layer.values_per_token(tp) * value)
        if layer.kind in WINDOWED_KINDS:
            per_token *= SWA_FULL_TOKENS_RATIO
        total += per_token
    return total


def pool_bytes(model: ModelSpec, setup: EngineSetup) -> tuple[float, float]:
    """(rest bytes for the KV pool, weights bytes per GPU)."""
    mfs = setup.mem_fraction_static or default_mem_fraction_static(setup)
    before = free_before_load_bytes(setup)
    weights = model.weights_bytes / (setup.tensor_parallel_size * setup.pipeline_parallel_size)
    return before - weights - before * (1 - mfs), weights
