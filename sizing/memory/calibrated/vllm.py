"""vLLM's GPU memory budget, calibrated against real start-up logs.

``available_kv = ceil(total × utilization) − weights − peak_activation − non_torch
[− cuda_graph_estimate]`` per GPU (``Worker.determine_available_memory``,
``vllm/v1/worker/gpu_worker.py``; reference ``vllm_memory_model.md`` §1 and §4).

- total: the CUDA-reported device total; utilization defaults to 0.9, and to 0.92 from
  v0.27 (the v0.27.1 and v0.31.0 logs print 0.92 with no flag).
- weights: the checkpoint's bytes over TP × PP ranks; a runtime ``--quantization fp8``
  stores every non-embedding weight of a 16-bit checkpoint in one byte; ``--dtype
  float32`` doubles a 16-bit checkpoint; every rank also holds the rotary table, the MoE
  router and replicated k/v projections (:mod:`sizing.memory.calibrated.loaded`).
- peak activation (V1 engine): the profile pass runs ``max_num_batched_tokens`` tokens;
  its peak is dominated by the logits (``tokens × vocab``), plus hidden-state buffers
  and the fused-MoE scratch. Coefficients fitted on the vLLM 0.19 H100 logs of the
  llm-d-planner accuracy sweep (ground-truth cases 002–059): ``(batched / 8192) ×
  (0.0429 + 1.3827e-5 × vocab + 1.8e-5 × hidden) GiB`` (Llama-3.1-8B 1.89, Qwen2.5-7B
  2.21, gemma-7b 3.63, gemma-2-27b 3.66 GiB logged), MoE +0.45 GiB, fp32 serving +0.32
  GiB. From v0.11 up to v0.17 the profile pass peaked about 2.5 × higher: Llama-3.1-8B
  on H100 measured 4.76 GiB on a v0.11-era build against 1.89 GiB on v0.19 (reference
  ``vllm_memory_model.md`` §1.2, a pair outside the bundled cases: factor 2.52), and the
  llm-d-planner version sweep shows Qwen3-14B's KV pool growing from 41.94 to 45.34 GiB
  at v0.17 (§2.7). The v0.10.1–v0.10.2 logs (A100, L40S) do not show it.
- V0 engine (before v0.7): the profile ran ``max_num_batched_tokens`` tokens, by default
  ``max(max_model_len, 2048)`` (V0 ``SchedulerConfig``; reference §1.2 and vllm issue
  #10517), logits only for the last token of each dummy sequence. The peak is reached in
  the MLP of a decoder layer, where ``LlamaMLP.forward`` (``vllm/model_executor/models/
  llama.py``, v0.6) holds the fused gate/up output (``2 × intermediate / TP``) while
  ``SiluAndMul`` writes its output (``intermediate / TP``), next to three hidden-size
  tensors: the previous layer's output still bound in ``LlamaModel.forward``'s loop, the
  residual and the attention output normalized in place (``fused_add_rms_norm``). That is
  ``dtype × 3 × (intermediate / TP + hidden)`` per token: 110,592 B for Llama-3.1-8B,
  2.06 GiB at 20,000 tokens and 2.99 GiB at 29,000 (issue #10517 logs peak_torch − weights:
  2.07 and 2.99 GiB). Above a 32,768-token ``max_model_len`` the OpenAI server enabled
  chunked prefill by default (``EngineArgs.create_engine_config``, v0.6) and the profile
  ran its 512-token budget: the same reporter's 35k and 45k runs peak at 15.05 GiB, i.e.
  weights + 0.06 GiB.
- non-torch: 0.25 GiB on one GPU in v0.15+ (v0.19 logs), 0.14 GiB before (v0.10.2
  logs); 0.35 GiB in the V0 engine (vllm issue #10517). With TP ≥ 2 the NCCL and custom
  all-reduce buffers depend on the interconnect: about 2.1 GiB per GPU on NVSwitch (SXM)
  servers (v0.19 H100 logs; vllm PR #10511's H100 check shows the same +1.8 GiB from TP 1
  to TP 2 in v0.6.5) and 0.21 GiB on PCIe cards (v0.10 logs: L40S TP 8, A100 PCIe TP 2).
  An unknown GPU is taken as PCIe.
- MXFP4 MoE weights (gpt-oss): what the Marlin or Triton backend loads beyond the
  checkpoint (padding, fp32 biases, scales held twice): :mod:`sizing.memory.calibrated.mxfp4`.
- CUDA graphs: from v0.21 ``Worker.determine_available_memory`` subtracts the runner's
  ``profile_cudagraph_memory`` estimate while ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``
  is on, its default (``vllm/envs.py``, ``vllm/v1/worker/gpu_worker.py``; both model
  runners profile graphs in the 0.31.0 wheel), unless graphs are off
  (``cudagraph_mode`` NONE, ``--enforce-eager``). A v0.29.1 log shows it ("makes 0.80
  effectively 0.758", eugr/spark-vllm-docker issue #396); the post-0.21 logs the
  reference reduced without it (v0.27.1, v0.31.0, GLM-5.3-Flash; reference §1.2) are
  read as runs with profiling off, which a setup states with
  ``EngineSetup.cuda_graph_profiling = False``. The estimate is the v0.19 logs' typical
  0.85 GiB at TP 1 and 1.5 GiB at TP ≥ 2; no shipped case is from v0.21 or later.
- ``max_num_batched_tokens`` default of the OpenAI server: 8192 on GPUs with at least
  70 GiB that are not A100, else 2048 (``EngineArgs._set_default_args``; the logs show
  8192 on H100 and 2048 on A100 and L40S).
"""

from __future__ import annotations

import math

from sizing.memory.calibrated import loaded, mxfp4
from sizing.memory.calibrated.setup import EngineSetup
from sizing.model.architecture import require_vocab_size
from sizing.model.checkpoint import embedding_params
from sizing.model.recurrent import DTYPE_BYTES
from sizing.model.spec import ModelSpec
from sizing.units import GIB

V1_SINCE = (0, 7)
"""First version profiled by the V1 engine rules used here."""
UTILIZATION_092_SINCE = (0, 27)
"""First version whose default ``gpu_memory_utilization`` is 0.92."""
CUDA_GRAPH_DEDUCTION_SINCE = (0, 21)
"""First version that subtracts its CUDA-graph estimate by default."""

ACT_BASE_GIB = 0.0429
ACT_PER_VOCAB_GIB = 1.3827e-5
ACT_PER_HIDDEN_GIB = 1.8e-5
ACT_MOE_GIB = 0.45
ACT_FP32_GIB = 0.32
ACT_FACTOR_V011_V016 = 2.52
"""4.76 / 1.89 GiB, Llama-3.1-8B on H100, v0.11-era build against v0.19 (reference §1.2)."""
LARGE_PROFILE_VERSIONS = ((0, 11), (0, 17))
"""Versions (from, before) whose profile pass peaked about 2.5 × higher."""
NON_TORCH_TP_NVSWITCH_GIB = 2.1
NON_TORCH_TP_PCIE_GIB = 0.21
REFERENCE_BATCHED_TOKENS = 8192
V0_LONG_CONTEXT_TOKENS = 32768
"""Above this ``max_model_len`` the V0 OpenAI server turned chunked prefill on by default."""
V0_CHUNKED_PREFILL_TOKENS = 512
"""V0 ``SchedulerConfig`` default ``max_num_batched_tokens`` with chunked prefill."""


def default_utilization(setup: EngineSetup) -> float:
    """``gpu_memory_utilization`` when none is given: 0.92 from v0.27, else 0.9."""
    return 0.92 if setup.version >= UTILIZATION_092_SINCE else 0.9


def default_batched_tokens(setup: EngineSetup, gpu_type: str = "") -> int:
    """``max_num_batched_tokens`` of the OpenAI server when none is given."""
    if setup.max_num_batched_tokens:
        return setup.max_num_batched_tokens
    big = setup.gpu_total_memory_gib >= 70 and abs(setup.gpu_total_memory_gib - 79.25) > 0.01
    return 8192 if big else 2048


def requested_bytes(setup: EngineSetup) -> int:
    """``ceil(total × utilization)`` in bytes (``request_memory``)."""
    util = setup.gpu_memory_utilization or default_utilization(setup)
    return math.ceil(setup.gpu_total_memory_gib * GIB * util)


def weights_bytes_per_gpu(model: ModelSpec, setup: EngineSetup) -> float:
    """Weights one GPU loads: the checkpoint over TP × PP, after runtime conversions, plus
    what every rank holds whole (rotary table, router, replicated k/v:
    :mod:`sizing.memory.calibrated.loaded`)."""
    total = float(model.weights_bytes)
    sixteen_bit = model.weight_format in ("bf16", "fp16")
    if setup.quantization == "fp8" and sixteen_bit:
        embed = embedding_params(model.config) * 2
        total = embed + (total - embed) / 2
    elif setup.dtype in ("float32", "fp32") and sixteen_bit:
        total *= 2
    tp, pp = setup.tensor_parallel_size, setup.pipeline_parallel_size
    extra = loaded.extra_loaded_bytes(model, tp, pp, setup.dtype)
    return total / (tp * pp) + mxfp4.extra_bytes_per_rank(model, setup) / pp + extra


def _is_moe(model: ModelSpec) -> bool:
    cfg = model.config.get("text_config") or model.config
    keys = ("n_routed_experts", "num_local_experts", "num_experts")
    return any(cfg.get(k) or model.config.get(k) for k in keys)


def activation_bytes(model: ModelSpec, setup: EngineSetup, batched_tokens: int) -> float:
    """Peak activation of the profile pass on one GPU (see the module docstring)."""
    arch = model.architecture
    if setup.version < V1_SINCE:
        cfg = model.config.get("text_config") or model.config
        inter = int(cfg.get("intermediate_size") or 4 * arch.hidden_size)
        serving = setup.dtype if setup.dtype != "auto" else arch.dtype
        width = DTYPE_BYTES.get(serving.lower(), 2)
        per_token = width * 3 * (inter / setup.tensor_parallel_size + arch.hidden_size)
        return v0_profile_tokens(setup) * per_token
    vocab = require_vocab_size(arch)
    gib = (batched_tokens / REFERENCE_BATCHED_TOKENS) * (
        ACT_BASE_GIB + ACT_PER_VOCAB_GIB * vocab + ACT_PER_HIDDEN_GIB * arch.hidden_size
    )
    if _is_moe(model):
        gib += ACT_MOE_GIB
    serving = setup.dtype if setup.dtype != "auto" else arch.dtype
    if DTYPE_BYTES.get(serving.lower(), 2) == 4:
        gib += ACT_FP32_GIB
    low, high = LARGE_PROFILE_VERSIONS
    if low <= setup.version < high:
        gib *= ACT_FACTOR_V011_V016
    return gib * GIB


def v0_profile_tokens(setup: EngineSetup) -> int:
    """Tokens of the V0 engine's profile pass (module docstring): ``max_num_batched_tokens``
    when given, else 512 when chunked prefill is on by default (``max_model_len`` above
    32,768), else ``max(max_model_len, 2048)``."""
    if setup.max_num_batched_tokens:
        return setup.max_num_batched_tokens
    if setup.max_model_len > V0_LONG_CONTEXT_TOKENS:
        return V0_CHUNKED_PREFILL_TOKENS
    return max(setup.max_model_len, 2048)


def non_torch_bytes(setup: EngineSetup) -> float:
    """Non-torch memory per GPU (cuBLAS workspace, NCCL, custom all-reduce)."""
    if setup.version < V1_SINCE:
        return 0.35 * GIB
    recent = setup.version >= (0, 15)
    if setup.tensor_parallel_size >= 2:
        cls = setup.gpu_class
        nvswitch = cls is not None and cls.nvswitch
        return (NON_TORCH_TP_NVSWITCH_GIB if nvswitch else NON_TORCH_TP_PCIE_GIB) * GIB
    if setup.pipeline_parallel_size >= 2:
        return 0.07 * GIB
    return (0.25 if recent else 0.14) * GIB


def cuda_graph_bytes(setup: EngineSetup) -> float:
    """CUDA-graph memory subtracted before the KV pool: 0 before v0.21 and when the setup
    states graph profiling off (module docstring)."""
    if setup.version < CUDA_GRAPH_DEDUCTION_SINCE or setup.cuda_graph_profiling is False:
        return 0.0
    return (0.85 if setup.tensor_parallel_size == 1 else 1.5) * GIB
