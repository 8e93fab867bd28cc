"""A model's layer geometry from its ``config.json`` and the KV-cache bytes it implies.

Each decoder layer keeps per token, for every KV head, a key and a value vector:
``2 × kv_heads × head_dim × bytes`` (full attention, MHA and GQA). Multi-head latent
attention (MLA) keeps one compressed latent of ``kv_lora_rank + qk_rope_head_dim``
values instead, with no factor 2. Sliding-window and chunked-local layers keep at most
their window of tokens; linear-attention and Mamba layers keep a fixed state per
sequence.

Sources:
    - seed document: "2 × Layer × KV-Heads × Head-Dimension × Bytes pro Wert", Qwen3-32B
      64 layers, 8 KV heads, head_dim 128 → 128 KiB per token with an FP8 cache.
    - vLLM ``vllm/attention/layer.py`` and ``vllm/v1/kv_cache_interface.py``
      (``FullAttentionSpec.page_size_bytes``, ``MLAAttentionSpec``): KV heads per rank
      ``max(1, kv_heads // tp)``; the MLA latent is not sharded by TP.
    - DeepSeek-V3 ``config.json`` (kv_lora_rank 512, qk_rope_head_dim 64): 576 values
      per layer and token.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sizing.errors import ConfigError


class LayerKind(StrEnum):
    """How one decoder layer stores its cache."""

    FULL = "full_attention"
    SLIDING = "sliding_attention"
    CHUNKED = "chunked_attention"
    MLA = "mla"
    LINEAR = "linear_attention"
    MAMBA = "mamba"


GROWING_KINDS = frozenset({LayerKind.FULL, LayerKind.MLA})
"""Layer kinds whose cache grows with every token of a conversation."""

WINDOWED_KINDS = frozenset({LayerKind.SLIDING, LayerKind.CHUNKED})
"""Layer kinds that hold at most ``window_tokens`` tokens per conversation."""

DTYPE_BYTES: Mapping[str, int] = {
    "float32": 4,
    "fp32": 4,
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}
"""Bytes per stored value for each dtype name used by configs and ``--kv-cache-dtype``."""


@dataclass(frozen=True)
class Layer:
    """One decoder layer's cache geometry.

    Attributes:
        kind: how the layer stores its cache.
        kv_heads: KV heads (1 for MLA, whose latent is shared by all heads).
        k_head_dim: values per key vector (MLA: ``kv_lora_rank + qk_rope_head_dim``).
        v_head_dim: values per value vector (0 for MLA: the latent holds both).
        window_tokens: tokens a windowed layer keeps; ``None`` for growing layers.
        state_bytes: fixed bytes per sequence for linear-attention or Mamba layers.
    """

    kind: LayerKind
    kv_heads: int = 0
    k_head_dim: int = 0
    v_head_dim: int = 0
    window_tokens: int | None = None
    state_bytes: int = 0

    def values_per_token(self, tp: int = 1) -> int:
        """Cached values one token adds to this layer on one tensor-parallel rank.

        KV heads are split over ``tp`` ranks and replicated when ``tp`` exceeds them
        (``max(1, kv_heads // tp)``, vLLM ``get_num_kv_heads``); the MLA latent is
        replicated on every rank. Linear and Mamba layers add nothing per token.
        """
        if self.kind in (LayerKind.LINEAR, LayerKind.MAMBA):
            return 0
        if self.kind is LayerKind.MLA:
            return self.k_head_dim
        heads = max(1, self.kv_heads // tp)
        return heads * (self.k_head_dim + self.v_head_dim)


@dataclass(frozen=True)
class Architecture:
    """What the sizing needs from a model's ``config.json``.

    Attributes:
        model_type: the config's ``model_type`` (of ``text_config`` for wrappers).
        layers: one entry per decoder layer, in order.
        num_attention_heads: query heads (TP must divide them).
        num_kv_heads: KV heads of the full-attention layers.
        hidden_size: model width.
        vocab_size: vocabulary size.
        max_context_tokens: ``max_position_embeddings`` (the longest context).
        dtype: the checkpoint's activation dtype (``torch_dtype``/``dtype``).
    """

    model_type: str
    layers: tuple[Layer, ...]
    num_attention_heads: int
    num_kv_heads: int
    hidden_size: int
    vocab_size: int
    max_context_tokens: int
    dtype: str

    @property
    def num_layers(self) -> int:
        """Decoder layers."""
        return len(self.layers)

    def count(self, kind: LayerKind) -> int:
        """Layers of ``kind``."""
        return sum(1 for layer in self.layers if layer.kind is kind)

    @property
    def uses_mla(self) -> bool:
        """True when the attention layers store an MLA latent."""
        return any(layer.kind is LayerKind.MLA for layer in self.layers)


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return the language-model part of a config: ``text_config`` of a multimodal
    wrapper (LLaVA, Gemma 3, Qwen3-VL, Kimi-VL), else the config itself."""
    inner = config.get("text_config") or config.get("language_config")
    if isinstance(inner, Mapping):
        merged = dict(inner)
        for key in ("torch_dtype", "dtype", "quantization_config"):
            if key not in merged and key in config:
                merged[key] = config[key]
        return merged
    return config


def _int(cfg: Mapping[str, Any], key: str, model_type: str) -> int:
    value = cfg.get(key)
    if value is None:
        raise ConfigError(
            f"config.{key}",
            f"config.json of this {model_type or 'model'} has no '{key}', "
            f"which its architecture needs to size the KV cache",
        )
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"config.{key}", f"config.json field '{key}' must be a positive integer, got {value!r}"
        )
    return value


def kv_dtype_bytes(kv_dtype: str, arch: Architecture) -> int:
    """Bytes per cached value for ``kv_dtype``.

    ``auto`` follows the model dtype (2 bytes for bf16/fp16, 4 for fp32), as vLLM's
    ``--kv-cache-dtype auto`` does (``vllm/config/cache.py``); ``fp8`` stores 1 byte.

    Raises:
        ConfigError: for an unknown dtype name.
    """
    name = arch.dtype if kv_dtype == "auto" else kv_dtype
    try:
        return DTYPE_BYTES[name.lower()]
    except KeyError:
        raise ConfigError(
            "kv_dtype", f"unknown KV-cache dtype {kv_dtype!r}; use auto, bf16, fp16, fp32 or fp8"
        ) from None


def from_config(config: Mapping[str, Any]) -> Architecture:
    """Parse a Hugging Face ``config.json`` into an :class:`Architecture`.

    Args:
        config: the parsed ``config.json`` (a multimodal wrapper's ``text_config`` is
            used when present).

    Returns:
        The layer geometry: MLA when ``kv_lora_rank`` is set (never from the name),
        sliding-window layers from ``layer_types`` or ``sliding_window_pattern``, the
        explicit ``head_dim`` when the config gives one.

    Raises:
        ConfigError: naming the missing or malformed field.
    """
    cfg = text_config(config)
    model_type = str(cfg.get("model_type") or config.get("model_type") or "")
    n_layers = _int(cfg, "num_hidden_layers", model_type)
    n_heads = _int(cfg, "num_attention_heads", model_type)
    hidden = _int(cfg, "hidden_size", model_type)
    kv_heads = cfg.get("num_key_value_heads") or n_heads
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    max_ctx = int(cfg.get("max_position_embeddings") or 0)
    vocab = int(cfg.get("vocab_size") or 0)

    if cfg.get("kv_lora_rank"):
        latent = _int(cfg, "kv_lora_rank", model_type) + _int(cfg, "qk_rope_head_dim", model_type)
        layers = tuple(Layer(LayerKind.MLA, kv_heads=1, k_head_dim=latent) for _ in range(n_layers))
    else:
        head_dim = cfg.get("head_dim") or hidden // n_heads
        if not isinstance(head_dim, int) or head_dim <= 0:
            raise ConfigError(
                "config.head_dim",
                f"config.json field 'head_dim' must be a positive integer, got {head_dim!r}",
            )
        kinds = _layer_kinds(cfg, n_layers)
        window = cfg.get("sliding_window")
        layers = tuple(
            Layer(
                kind,
                kv_heads=int(kv_heads),
                k_head_dim=head_dim,
                v_head_dim=head_dim,
                window_tokens=int(window) if kind is LayerKind.SLIDING and window else None,
            )
            for kind in kinds
        )
    return Architecture(
        model_type=model_type,
        layers=layers,
        num_attention_heads=n_heads,
        num_kv_heads=int(kv_heads),
        hidden_size=hidden,
        vocab_size=vocab,
        max_context_tokens=max_ctx,
        dtype=dtype,
    )


def _layer_kinds(cfg: Mapping[str, Any], n_layers: int) -> list[LayerKind]:
    """Attention kind per layer from ``layer_types`` or ``sliding_window_pattern``.

    Source: transformers' Gemma 2/3 and gpt-oss configs (``layer_types`` lists
    ``sliding_attention``/``full_attention``; Gemma 3's ``sliding_window_pattern`` 6
    makes every sixth layer global).
    """
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == n_layers:
        return [LayerKind.SLIDING if t == "sliding_attention" else LayerKind.FULL for t in types]
    pattern = cfg.get("sliding_window_pattern")
    if isinstance(pattern, int) and pattern > 1 and cfg.get("sliding_window"):
        return [
            LayerKind.FULL if (i + 1) % pattern == 0 else LayerKind.SLIDING for i in range(n_layers)
        ]
    return [LayerKind.FULL] * n_layers


def kv_bytes_per_token(arch: Architecture, kv_dtype: str, tp: int = 1) -> int:
    """Bytes one more token adds to a long conversation on one tensor-parallel rank.

    Only layers whose cache grows with the context count (full attention, MLA);
    windowed layers and fixed states do not. With ``tp=1`` this is the whole model's
    figure, the JSON summary's ``kv_bytes_per_token``.

    Seed example: Qwen3-32B, FP8 cache → 2 × 64 × 8 × 128 × 1 = 131,072 bytes.
    """
    per_value = kv_dtype_bytes(kv_dtype, arch)
    return sum(
        layer.values_per_token(tp) * per_value
        for layer in arch.layers
        if layer.kind in GROWING_KINDS
    )


def conversation_bytes(arch: Architecture, kv_dtype: str, context_tokens: int, tp: int = 1) -> int:
    """Bytes one conversation of ``context_tokens`` holds on one tensor-parallel rank.

    Growing layers hold every token, windowed layers at most their window, linear and
    Mamba layers their fixed state. Seed example: 8,192 tokens of Qwen3-32B with an
    FP8 cache = 1 GiB.

    Raises:
        ValueError: if ``context_tokens`` is not positive.
    """
    if context_tokens <= 0:
        raise ValueError(f"context_tokens must be positive, got {context_tokens}")
    per_value = kv_dtype_bytes(kv_dtype, arch)
    total = 0
    for layer in arch.layers:
        tokens = context_tokens
        if layer.kind in WINDOWED_KINDS and layer.window_tokens:
            tokens = min(context_tokens, layer.window_tokens)
        total += layer.values_per_token(tp) * per_value * tokens + layer.state_bytes
    return total
