"""The share of a mixture-of-experts checkpoint that sits in its routed experts.

Expert parallelism shards the routed experts, not the attention, embeddings, dense
layers or shared experts, so the parallelism plan needs the experts' bytes apart from
the rest.

Rule: per MoE layer, ``experts × 3 × hidden_size × moe_intermediate_size`` parameters
(gate, up and down projections of every routed expert); MoE layers are the decoder
layers minus ``first_k_dense_replace`` leading dense layers (DeepSeek-V2/V3, GLM-4.5,
Kimi), minus ``mlp_only_layers`` and every ``decoder_sparse_step``-th layer only (Qwen
MoE), every ``interleave_moe_layer_step``-th layer only (Llama 4), or the ``E`` layers
of a ``hybrid_override_pattern`` (Nemotron-H). Stored at the checkpoint's weight format
(:data:`sizing.model.checkpoint.WEIGHT_BITS`), never more than the whole checkpoint.

Sources: the weight shapes of the transformers/vLLM MoE model classes (Mixtral,
Qwen3-MoE, DeepSeek-V3, Llama 4, gpt-oss, Nemotron-H) and their published
``config.json`` fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sizing.model.checkpoint import WEIGHT_BITS
from sizing.model.config_reader import text_config


def routed_experts(config: Mapping[str, Any]) -> int:
    """Routed experts per MoE layer from ``config.json`` (0 for a dense model)."""
    cfg = text_config(config)
    return int(
        cfg.get("n_routed_experts") or cfg.get("num_local_experts") or cfg.get("num_experts") or 0
    )


def moe_layers(config: Mapping[str, Any]) -> int:
    """Decoder layers that hold routed experts (0 for a dense model)."""
    cfg = text_config(config)
    if not routed_experts(config):
        return 0
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return pattern.count("E")
    n_layers = int(cfg.get("num_hidden_layers") or 0)
    step = int(cfg.get("interleave_moe_layer_step") or cfg.get("decoder_sparse_step") or 1)
    first_dense = int(cfg.get("first_k_dense_replace") or 0)
    dense_only = {int(i) for i in cfg.get("mlp_only_layers") or []}
    return sum(
        1
        for i in range(n_layers)
        if i >= first_dense and i not in dense_only and (i + 1) % max(step, 1) == 0
    )


def expert_params(config: Mapping[str, Any]) -> int:
    """Parameters of the routed experts over all MoE layers (0 for a dense model).

    DeepSeek-V3 (computed from its config): 58 MoE layers × 256 experts × 3 × 7,168 ×
    2,048 = 653.9 billion of its 671 billion parameters.
    """
    cfg = text_config(config)
    experts = routed_experts(config)
    if not experts:
        return 0
    hidden = int(cfg.get("hidden_size") or 0)
    inter = int(cfg.get("moe_intermediate_size") or cfg.get("intermediate_size") or 0)
    return moe_layers(config) * experts * 3 * hidden * inter


def expert_weights_bytes(config: Mapping[str, Any], weight_format: str, weights_bytes: int) -> int:
    """Bytes of the routed experts in a checkpoint of ``weights_bytes`` bytes.

    Args:
        config: the parsed ``config.json``.
        weight_format: a key of :data:`sizing.model.checkpoint.WEIGHT_BITS`.
        weights_bytes: the whole checkpoint, bytes (the cap).

    Raises:
        ValueError: for an unknown weight format.
    """
    try:
        bits = WEIGHT_BITS[weight_format]
    except KeyError:
        raise ValueError(f"unknown weight format {weight_format!r}") from None
    return min(weights_bytes, round(expert_params(config) * bits / 8))
