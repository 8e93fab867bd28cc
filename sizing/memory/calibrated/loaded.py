"""What one vLLM rank holds beyond its share of the checkpoint, in bytes.

"Model loading took X GiB" is the torch memory the rank allocated while building and
loading the model (``DeviceMemoryProfiler`` around ``load_model``,
``vllm/v1/worker/gpu_model_runner.py``; reference ``vllm_memory_model.md`` §1.2). Beside
the checkpoint's tensors divided over the ranks it counts:

- **the rotary cos/sin table**: ``RotaryEmbedding`` builds a buffer of
  ``max_position_embeddings × rotary_dim`` values in the serving dtype at construction
  (``_compute_cos_sin_cache``, ``vllm/model_executor/layers/rotary_embedding``); ``get_rope``
  caches one instance per parameter set, so a model holds one table per rank, neither
  split by TP nor by PP. ``rotary_dim`` is ``head_dim × partial_rotary_factor``, for MLA
  ``qk_rope_head_dim``. The logs agree: Llama-3.1-8B loads 14.99 GiB against 14.96 GiB of
  checkpoint (131,072 × 128 × 2 B = 0.031 GiB) and 29.98 GiB at ``--dtype float32`` (the
  table doubles too); Llama-4-Scout (10,485,760 positions × 128 × 2 B = 2.5 GiB) loads
  53.12 GiB per GPU at TP 4 against 50.6 GiB of checkpoint share. Scaled tables
  (``get_rope`` and the classes of ``vllm/model_executor/layers/rotary_embedding/``,
  0.31.0 wheel): ``linear`` concatenates one table of ``max_position × factor`` per
  factor; ``yarn`` and ``deepseek_yarn`` build ``original_max_position_embeddings ×
  factor`` positions; ``longrope`` (Phi-3) keeps a short table of the original length and
  a long one of ``max_position_embeddings``; ``dynamic``, ``llama3`` and the default keep
  ``max_position_embeddings``.
- **replicated key/value projections**: when TP exceeds the KV heads, each rank keeps
  the projection of one whole KV head (``QKVParallelLinear``: ``num_kv_heads = max(1,
  total / tp)``, ``num_kv_head_replicas = tp / total``,
  ``vllm/model_executor/layers/linear.py``), i.e. ``1 / total`` of the k/v weights
  instead of ``1 / tp``.
- **the MoE router**: the ``gate`` of Qwen/Mixtral/DeepSeek-style MoE blocks is a
  ``ReplicatedLinear`` kept at 16 bit (FP8 checkpoints leave it unquantized), so every
  rank holds all of it.

Qwen3-235B-A22B-2507-FP8 at TP 8 on L40S (vLLM 0.10.2) logs 27.72 GiB per GPU; the
checkpoint share is 27.53 GiB, the router adds 0.08, the replicated k/v 0.05 and the
rotary table (262,144 × 128 × 2 B) 0.06 GiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sizing.model.architecture import ATTENTION_KINDS, LayerKind
from sizing.model.checkpoint import WEIGHT_BITS
from sizing.model.config_reader import text_config
from sizing.model.recurrent import DTYPE_BYTES
from sizing.model.spec import ModelSpec


def _serving_bytes(model: ModelSpec, dtype: str) -> int:
    serving = dtype if dtype not in ("", "auto") else model.architecture.dtype
    return DTYPE_BYTES.get(serving.lower(), 2)


def rope_cache_bytes(model: ModelSpec, dtype: str = "auto") -> float:
    """Bytes of the rotary cos/sin table one rank holds (module docstring).

    Args:
        model: the model; its config's ``max_position_embeddings``, ``head_dim`` (or
            hidden / heads), ``partial_rotary_factor`` and ``qk_rope_head_dim`` are read.
        dtype: the serving dtype (``auto``: the checkpoint's).

    Returns:
        Bytes; 0 when the config does not state ``max_position_embeddings`` or the model
        has no rotary layers (``no_rope_layers`` all 0).
    """
    cfg: Mapping[str, Any] = text_config(model.config)
    positions = rope_table_positions(cfg)
    no_rope = cfg.get("no_rope_layers")
    if not positions or (isinstance(no_rope, list) and no_rope and not any(no_rope)):
        return 0.0
    if cfg.get("qk_rope_head_dim"):
        rotary_dim = int(cfg["qk_rope_head_dim"])
    else:
        heads = int(cfg.get("num_attention_heads") or 0)
        hidden = int(cfg.get("hidden_size") or 0)
        head_dim = int(cfg.get("head_dim") or (hidden // heads if heads else 0))
        rotary_dim = int(head_dim * float(cfg.get("partial_rotary_factor") or 1.0))
    return float(positions * rotary_dim * _serving_bytes(model, dtype))


def rope_table_positions(cfg: Mapping[str, Any]) -> int:
    """Positions of the rotary cos/sin table(s) vLLM builds for ``cfg`` (module docstring);
    0 without ``max_position_embeddings``."""
    positions = int(cfg.get("max_position_embeddings") or 0)
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if not positions or not isinstance(rope, Mapping):
        return positions
    kind = str(rope.get("rope_type") or rope.get("type") or "default")
    factor = rope.get("factor")
    original = int(rope.get("original_max_position_embeddings") or 0)
    if kind == "linear" and factor:
        factors = factor if isinstance(factor, list) else [factor]
        return int(sum(positions * float(f) for f in factors))
    if kind in ("yarn", "deepseek_yarn", "deepseek_llama_scaling") and factor and original:
        return int(original * float(factor))
    if kind == "longrope" and original:
        return positions + original
    return positions


def replicated_kv_projection_bytes(model: ModelSpec, tp: int, pp: int = 1) -> float:
    """Extra bytes one rank holds because TP exceeds the KV heads (module docstring).

    The k and v projections of every full or windowed attention layer (not MLA) are
    ``2 × kv_heads × head_dim × hidden`` weights at the checkpoint's bits; a rank keeps
    ``1 / kv_heads`` of them rather than ``1 / tp``. Layers split over ``pp`` stages.
    """
    arch = model.architecture
    bits = WEIGHT_BITS.get(model.weight_format, 16)
    extra = 0.0
    for layer in arch.layers:
        if layer.kind not in ATTENTION_KINDS or layer.kind == LayerKind.MLA:
            continue
        if not layer.kv_heads or tp <= layer.kv_heads:
            continue
        per_head = (layer.k_head_dim + layer.v_head_dim) * arch.hidden_size * bits / 8
        extra += per_head * (1 - layer.kv_heads / tp)
    return extra / pp


def router_bytes(model: ModelSpec) -> float:
    """Bytes of all MoE router weights (16 bit), 0 for a dense model.

    Counts ``experts × hidden`` per MoE layer: all decoder layers, less the first
    ``first_k_dense_replace`` (DeepSeek), or every ``interleave_moe_layer_step``-th
    (Llama 4).
    """
    cfg: Mapping[str, Any] = text_config(model.config)
    experts = int(
        cfg.get("n_routed_experts") or cfg.get("num_local_experts") or cfg.get("num_experts") or 0
    )
    if not experts:
        return 0.0
    layers = int(cfg.get("num_hidden_layers") or model.architecture.num_layers)
    layers -= int(cfg.get("first_k_dense_replace") or 0)
    step = int(cfg.get("interleave_moe_layer_step") or 1)
    return float(experts * model.architecture.hidden_size * 2 * (layers // max(step, 1)))


def extra_loaded_bytes(model: ModelSpec, tp: int, pp: int, dtype: str = "auto") -> float:
    """Bytes one rank loads beyond ``checkpoint / (tp × pp)``: the rotary table, the
    router copies of the other TP ranks and replicated k/v projections."""
    router = router_bytes(model) * (1 - 1 / tp) / pp
    return rope_cache_bytes(model, dtype) + router + replicated_kv_projection_bytes(model, tp, pp)
