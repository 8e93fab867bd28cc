"""What vLLM's MXFP4 MoE backends load beyond the checkpoint (gpt-oss), per rank.

Read from ``Mxfp4MoEMethod`` (``vllm/model_executor/layers/quantization/mxfp4.py``):
``create_weights`` pads each expert's shapes for the chosen backend and
``process_weights_after_loading`` converts them. The checkpoint stores 4.25 bits per
expert value (fp4 plus one 8-bit scale per 32 values) and bf16 biases.

- Backend (``get_mxfp4_backend``): Triton (``triton_kernels`` ``matmul_ogs``) on compute
  capability 9.0 up to (not including) 11.0 when ``triton_kernels`` is installed, else
  Marlin; Marlin below 9.0 and from 11.0 on (SM120 needs a Triton fix the code names).
  Which one a Hopper run used is tied to the version by logs: v0.10.1 on an H100 printed
  the Marlin warning and loaded 65.97 GiB for gpt-oss-120b (vllm issue #23278), v0.14.1
  printed "Using Triton backend" and loaded 64.38 GiB (vllm issue #33155), the same
  64.38 GiB as a v0.11-era H100 row (llm-d-benchmark ``empirical-vllm-memory-results.md``);
  so Triton from v0.11 on Hopper and Blackwell, Marlin before. FlashInfer's own SM90/SM100
  backends are opt-in there (``VLLM_USE_FLASHINFER_MOE_MXFP4_*``) except SM100 with
  FlashInfer installed, which is not modelled (treated as Triton).
- Marlin pads the intermediate size per rank to a multiple of 128 and the hidden size to
  a multiple of 256 (its kernel needs ``n % 256 == 0`` and ``k % 128 == 0``).
- Triton rounds the intermediate size to a multiple of 64, converts both biases to fp32
  (2 bytes more per bias value) and swizzles weights and scales into new tensors: the
  weights' originals are deleted, the scales' (``layer.w13_weight_scale``,
  ``layer.w2_weight_scale``) are kept, so every scale byte is held twice.
"""

from __future__ import annotations

from sizing.memory.calibrated.setup import EngineSetup
from sizing.model.spec import ModelSpec

MXFP4_BITS = 4.25
MXFP4_BLOCK = 32
"""Values per 8-bit scale."""
TRITON_SINCE = (0, 11)
"""First version whose Hopper/Blackwell runs the logs show on the Triton backend."""


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def backend(setup: EngineSetup) -> str | None:
    """``"marlin"`` or ``"triton"`` for this GPU and version; ``None`` when the GPU is
    unknown (module docstring)."""
    cls = setup.gpu_class
    if cls is None:
        return None
    triton_capable = (9, 0) <= cls.compute_capability < (11, 0)
    return "triton" if triton_capable and setup.version >= TRITON_SINCE else "marlin"


def extra_bytes_per_rank(model: ModelSpec, setup: EngineSetup) -> float:
    """Bytes one tensor-parallel rank loads beyond its checkpoint share for MXFP4 experts
    (all its pipeline stages' layers; 0 for other formats or an unknown GPU).

    Source: module docstring (``Mxfp4MoEMethod``).
    """
    if model.weight_format != "mxfp4":
        return 0.0
    chosen = backend(setup)
    cfg = model.config.get("text_config") or model.config
    experts = int(cfg.get("num_local_experts") or cfg.get("num_experts") or 0)
    inter = int(cfg.get("moe_intermediate_size") or cfg.get("intermediate_size") or 0)
    if chosen is None or not experts or not inter:
        return 0.0
    hidden = model.architecture.hidden_size
    layers = int(cfg.get("num_hidden_layers") or model.architecture.num_layers)
    inter_rank = inter // setup.tensor_parallel_size
    if chosen == "marlin":
        inter_pad, hidden_pad = _round_up(inter_rank, 128), _round_up(hidden, 256)
    else:
        inter_pad, hidden_pad = _round_up(inter_rank, 64), hidden
    values = 3 * inter_pad * hidden_pad
    padding = values - 3 * inter_rank * hidden
    per_expert = padding * MXFP4_BITS / 8
    if chosen == "triton":
        bias_values = 2 * inter_pad + hidden_pad
        per_expert += values / MXFP4_BLOCK + 2 * bias_values
    return experts * layers * per_expert
