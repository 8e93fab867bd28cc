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
- peak activation (V1 engine): the profile pass (``profile_run``,
  ``vllm/v1/worker/gpu_model_runner.py``) runs ``max_num_batched_tokens`` tokens as
  ``max_num_seqs`` dummy requests, then the sampler on one logit row per request with
  top-k and top-p set (``_dummy_sampler_run``). The peak is the larger of the forward
  pass (hidden-state buffers, the fused-MoE scratch) and the sampler (``max_num_seqs ×
  vocab`` logits and what top-k/top-p makes of them), so its size follows the top-k/top-p
  implementation (``vllm/v1/sample/ops/topk_topp_sampler.py``):
  - FlashInfer's sampling kernels or, from v0.17.0, vLLM's Triton top-k/top-p kernel
    (``apply_top_k_top_p_triton`` for batches of 8 or more) need no sort. Coefficients
    fitted on the vLLM 0.19 H100 logs of the llm-d-planner accuracy sweep (ground-truth
    cases 002–059): ``(batched / 8192) × (0.0429 + 1.8e-5 × hidden) + (seqs / 1024) ×
    1.3827e-5 × vocab GiB`` (Llama-3.1-8B 1.89, Qwen2.5-7B 2.21, gemma-7b 3.63,
    gemma-2-27b 3.66 GiB logged), MoE +0.45 GiB at 8192 tokens, fp32 serving +0.32 GiB.
    The MoE term scales with the batched tokens: the fused-MoE kernels' intermediate
    caches are ``tokens × top_k × N`` (``fused_experts_impl`` and the modular kernels'
    ``workspace13``/``workspace2``, ``vllm/model_executor/layers/fused_moe/fused_moe.py``,
    0.19.0 wheel).
  - PyTorch's sort (``apply_top_k_top_p`` sorting the fp32 logits with int64 indices,
    then softmax and cumsum over the sorted copy) needs about 2.6 × more per logit:
    ``(batched / 8192) × (0.0429 + 1.8e-5 × hidden) + (seqs / 1024) × 3.62e-5 × vocab
    GiB``, with no MoE term (the sampler's peak is above the forward pass's). Fitted on
    the five H100 rows of llm-d/llm-d-benchmark ``config_explorer/
    empirical-vllm-memory-results.md`` (commit 4f4d449): Llama-3.1-8B 4.76, Qwen3-0.6B
    5.56, Qwen3-32B 5.64, gpt-oss-20b 7.38 GiB at TP 1 and Llama-3.3-70B-FP8 4.84 GiB at
    TP 2 (3.62–3.63e-5 GiB per vocabulary entry, each; the gpt-oss row without the MoE
    term). The llm-d-planner version sweep shows the switch: Qwen3-14B's KV pool grows
    by 3.40 GiB from v0.16 to v0.17 (§2.7), the two rules differ by 3.37 GiB there.
  - which one runs: up to v0.11.0 FlashInfer's when the ``flashinfer`` package is
    installed (``VLLM_USE_FLASHINFER_SAMPLER`` unset meant on), which the
    ``vllm/vllm-openai`` image ships and a plain ``pip install vllm`` does not (it is the
    ``flashinfer`` extra in the wheel's metadata up to 0.11.0); from v0.11.1 FlashInfer's
    only with ``VLLM_USE_FLASHINFER_SAMPLER=1``, so PyTorch's sort until v0.17.0 brought
    the Triton kernel. ``EngineSetup.sort_sampler`` states it; unstated, a build before
    v0.11.1 is taken with FlashInfer, and the sort rule is its band.
  - ``max_num_seqs`` default (``EngineArgs._set_default_args``): 1024 on GPUs with at
    least 70 GiB that are not A100, 256 otherwise, and 1024 on every GPU from v0.31.
- AWQ, GPTQ and other 4-bit checkpoints: the same rules (the logits and the sampler do
  not depend on the weight format; the case-055 w4a16 log on H100 is within 0.2 %). Their
  Marlin kernels' workspace and a small GPU's fewer capture sizes are not modelled: a
  0.26.0 AWQ run on a 16 GB card under WSL2 logged 0.55 GiB of activation where these
  rules gave 1.04 GiB before the MoE scratch was scaled with the batched tokens, and
  0.48 GiB of graphs against 0.85, so such a prediction carries a band of ±0.5 GiB on
  activation and ±0.4 GiB on graphs (:data:`QUANTIZED_4BIT_BAND_GIB`,
  :func:`quantized_band_gib`).
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
  logs); 0.35 GiB in the V0 engine (vllm issue #10517). With TP ≥ 2 it holds what the
  profile pass allocates outside torch's allocator:
  - the FlashInfer all-reduce + RMSNorm fusion workspace, on by default from v0.17.0 at
    TP > 1 on compute capability 9.0 (Hopper) and 10.x (Blackwell) when FlashInfer is
    installed, before v0.21 only with DP 1 and PP 1 (``enable_allreduce_rms_fusion``,
    ``vllm/config/vllm.py``, 0.17.0–0.31.0 wheels; ``enable_fi_allreduce_fusion`` was off
    by default in 0.11.1): about 2.1 GiB per GPU (v0.19 H100 logs, TP 2 and 4: 2.07–2.21);
  - without it, NCCL and custom all-reduce buffers: about 0.55 GiB per GPU on NVSwitch
    servers (llm-d-benchmark ``empirical-vllm-memory-results.md``, Llama-3.3-70B-FP8 at
    TP 2 on H100, a v0.11-era image) and 0.21 GiB on PCIe cards (v0.10 logs: L40S TP 8,
    A100 PCIe TP 2). Up to v0.10 the worker took its start snapshot before the
    distributed init (``Worker.init_device``, 0.10.2), from v0.11.0 after it, with no
    visible change in these figures.
  An unknown GPU is taken as PCIe without the fusion.
- MXFP4 MoE weights (gpt-oss): what the Marlin or Triton backend loads beyond the
  checkpoint (padding, fp32 biases, scales held twice): :mod:`sizing.memory.calibrated.mxfp4`.
- CUDA graphs: ``Worker.determine_available_memory`` subtracts the runner's
  ``profile_cudagraph_memory`` estimate when ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``
  is on and ``cudagraph_mode`` is not NONE (``--enforce-eager``). The variable defaults
  to 0 in the 0.19.0 wheel and to 1 from the 0.20.0 wheel on (``vllm/envs.py``; the
  log's "default since v0.21.0" sentence is already in 0.20.0's ``gpu_worker.py``). From
  v0.27.1 the worker's ``peak_activation_memory`` (the "peak activation" of the "Free
  memory on device" line) is the transient peak plus the applied estimate, so a log
  that reads as requested − weights − activation − non-torch has the graphs inside its
  activation figure. A setup states profiling off with ``EngineSetup.cuda_graph_profiling
  = False``. The estimate is the v0.19 logs' typical 0.85 GiB at TP 1 and 1.5 GiB at TP
  ≥ 2; logged estimates with few capture sizes are 0.09–0.36 GiB (gpustack/runner PR
  #251, noonghunna/club-3090 issue #434), so the band is −0.8 GiB.
- ``max_num_batched_tokens`` default of the OpenAI server (``EngineArgs._set_default_args``):
  8192 on GPUs with at least 70 GiB that are not A100, else 2048 (the logs show 8192 on
  H100 and 2048 on A100 and L40S); from v0.28 16384 on GPUs with at least 160 GiB, and
  from v0.31 8192 on the others.
- A version range (``"~0.10.2-0.11"``) is predicted at each end and at every version in
  it where a term changes (:func:`sizing.memory.calibrated.setup.versions_in_range`); the
  prediction is the middle of that band and carries it.
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
NON_TORCH_025_SINCE = (0, 15)
"""First version read whose single-GPU non-torch memory is 0.25 GiB."""
UTILIZATION_092_SINCE = (0, 27)
"""First version whose default ``gpu_memory_utilization`` is 0.92."""
CUDA_GRAPH_DEDUCTION_SINCE = (0, 20)
"""First wheel whose ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` defaults to 1."""
FLASHINFER_SAMPLER_OPT_IN_SINCE = (0, 11, 1)
"""First version whose FlashInfer top-k/top-p sampler is opt-in."""
TRITON_TOP_K_TOP_P_SINCE = (0, 17)
"""First version with the Triton top-k/top-p kernel (no sort)."""
ALLREDUCE_FUSION_SINCE = (0, 17)
"""First version that fuses all-reduce and RMSNorm with FlashInfer by default."""
ALLREDUCE_FUSION_ANY_PP_SINCE = (0, 21)
"""First version that keeps the fusion with PP or DP above 1."""
LARGE_GPU_BATCHED_SINCE = (0, 28)
"""First version that gives GPUs of 160 GiB and more 16,384 batched tokens."""
SMALL_GPU_1024_SEQS_SINCE = (0, 31)
"""First version that gives every GPU 1024 sequences and 8192 batched tokens."""

ACT_BASE_GIB = 0.0429
ACT_PER_VOCAB_GIB = 1.3827e-5
ACT_SORT_PER_VOCAB_GIB = 3.62e-5
"""PyTorch-sort sampler, GiB per vocabulary entry at 1024 sequences (module docstring)."""
ACT_PER_HIDDEN_GIB = 1.8e-5
ACT_MOE_GIB = 0.45
ACT_FP32_GIB = 0.32
QUANTIZED_4BIT_BAND_GIB = (0.5, 0.4)
"""± band of a 4-bit (AWQ/GPTQ) prediction: (activation, CUDA graphs), GiB."""
NON_TORCH_TP_FUSION_GIB = 2.1
NON_TORCH_TP_NVSWITCH_GIB = 0.55
NON_TORCH_TP_PCIE_GIB = 0.21
REFERENCE_BATCHED_TOKENS = 8192
REFERENCE_SEQS = 1024
V0_LONG_CONTEXT_TOKENS = 32768
"""Above this ``max_model_len`` the V0 OpenAI server turned chunked prefill on by default."""
V0_CHUNKED_PREFILL_TOKENS = 512
"""V0 ``SchedulerConfig`` default ``max_num_batched_tokens`` with chunked prefill."""


def default_utilization(setup: EngineSetup) -> float:
    """``gpu_memory_utilization`` when none is given: 0.92 from v0.27, else 0.9."""
    return 0.92 if setup.version >= UTILIZATION_092_SINCE else 0.9


def _big_gpu(setup: EngineSetup) -> bool:
    """At least 70 GiB and not an A100 (``_set_default_args``)."""
    total = setup.gpu_total_memory_gib
    return total >= 70 and "a100" not in setup.gpu_type.lower() and abs(total - 79.25) > 0.01


def default_batched_tokens(setup: EngineSetup, gpu_type: str = "") -> int:
    """``max_num_batched_tokens`` of the OpenAI server when none is given (module
    docstring)."""
    if setup.max_num_batched_tokens:
        return setup.max_num_batched_tokens
    if setup.version >= LARGE_GPU_BATCHED_SINCE and setup.gpu_total_memory_gib >= 160:
        return 16384
    if _big_gpu(setup) or setup.version >= SMALL_GPU_1024_SEQS_SINCE:
        return 8192
    return 2048


def default_max_num_seqs(setup: EngineSetup) -> int:
    """``max_num_seqs`` when none is given: 1024 on big GPUs (and on all from v0.31),
    else 256, never more than the batched tokens (``_set_default_args``)."""
    if setup.max_num_seqs:
        return setup.max_num_seqs
    big = _big_gpu(setup) or setup.version >= SMALL_GPU_1024_SEQS_SINCE
    return min(1024 if big else 256, default_batched_tokens(setup))


def sorts_in_sampler(setup: EngineSetup) -> bool:
    """Whether the profile's sampler sorts the logits with PyTorch (module docstring):
    as stated, else from v0.11.1 up to v0.17."""
    if setup.version >= TRITON_TOP_K_TOP_P_SINCE:
        return False
    if setup.sort_sampler is not None:
        return setup.sort_sampler
    return setup.version >= FLASHINFER_SAMPLER_OPT_IN_SINCE


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
    forward = (batched_tokens / REFERENCE_BATCHED_TOKENS) * (
        ACT_BASE_GIB + ACT_PER_HIDDEN_GIB * arch.hidden_size
    )
    seqs = default_max_num_seqs(setup) / REFERENCE_SEQS
    if sorts_in_sampler(setup):
        gib = forward + seqs * ACT_SORT_PER_VOCAB_GIB * vocab
    else:
        gib = forward + seqs * ACT_PER_VOCAB_GIB * vocab
        if _is_moe(model):
            gib += ACT_MOE_GIB * batched_tokens / REFERENCE_BATCHED_TOKENS
    serving = setup.dtype if setup.dtype != "auto" else arch.dtype
    if DTYPE_BYTES.get(serving.lower(), 2) == 4:
        gib += ACT_FP32_GIB
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


def allreduce_fusion(setup: EngineSetup) -> bool:
    """Whether the FlashInfer all-reduce + RMSNorm fusion runs (module docstring)."""
    cls = setup.gpu_class
    if cls is None or setup.tensor_parallel_size < 2 or setup.version < ALLREDUCE_FUSION_SINCE:
        return False
    major, minor = cls.compute_capability
    if not ((major, minor) == (9, 0) or major == 10):
        return False
    one_stage = setup.pipeline_parallel_size == 1 and setup.data_parallel_size == 1
    return one_stage or setup.version >= ALLREDUCE_FUSION_ANY_PP_SINCE


def non_torch_bytes(setup: EngineSetup) -> float:
    """Non-torch memory per GPU (cuBLAS workspace, NCCL, custom all-reduce, the
    all-reduce fusion workspace; module docstring)."""
    if setup.version < V1_SINCE:
        return 0.35 * GIB
    recent = setup.version >= NON_TORCH_025_SINCE
    if setup.tensor_parallel_size >= 2:
        if allreduce_fusion(setup):
            return NON_TORCH_TP_FUSION_GIB * GIB
        cls = setup.gpu_class
        nvswitch = cls is not None and cls.nvswitch
        return (NON_TORCH_TP_NVSWITCH_GIB if nvswitch else NON_TORCH_TP_PCIE_GIB) * GIB
    if setup.pipeline_parallel_size >= 2:
        return 0.07 * GIB
    return (0.25 if recent else 0.14) * GIB


def cuda_graph_bytes(setup: EngineSetup) -> float:
    """CUDA-graph memory subtracted before the KV pool: 0 before the 0.20 wheel and when
    the setup states graph profiling off (module docstring)."""
    if setup.version < CUDA_GRAPH_DEDUCTION_SINCE or setup.cuda_graph_profiling is False:
        return 0.0
    return (0.85 if setup.tensor_parallel_size == 1 else 1.5) * GIB


FOUR_BIT_FORMATS = ("awq", "gptq", "w4a16")


def quantized_band_gib(
    model: ModelSpec, kv_cache_gib: float, graphs_subtracted: bool
) -> tuple[float, float] | None:
    """The KV GiB band of a 4-bit (AWQ/GPTQ/W4A16) checkpoint: ``kv_cache_gib`` ± the
    activation band, ± the graph band when an estimate is subtracted
    (:data:`QUANTIZED_4BIT_BAND_GIB`); ``None`` for other formats."""
    if model.weight_format not in FOUR_BIT_FORMATS:
        return None
    act, graphs = QUANTIZED_4BIT_BAND_GIB
    width = act + (graphs if graphs_subtracted else 0.0)
    return (kv_cache_gib - width, kv_cache_gib + width)
