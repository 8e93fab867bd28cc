"""A model's layer geometry and the KV-cache bytes it implies.

Each decoder layer keeps per token, for every KV head, a key and a value vector:
``2 × kv_heads × head_dim × bytes`` (full attention, MHA and GQA). Multi-head latent
attention (MLA) keeps one compressed latent of ``kv_lora_rank + qk_rope_head_dim``
values instead, with no factor 2. Sliding-window and chunked-local layers keep at most
their window of tokens; linear-attention and Mamba layers keep a fixed state per
sequence (see :mod:`sizing.model.recurrent`). The geometry is read from a model's
``config.json`` by :mod:`sizing.model.config_reader`.

Sources:
    - sizing article: "2 × Layer × KV-Heads × Head-Dimension × Bytes pro Wert", Qwen3-32B
      64 layers, 8 KV heads, head_dim 128 → 128 KiB per token with an FP8 cache.
    - vLLM ``vllm/v1/kv_cache_interface.py`` (``FullAttentionSpec``, ``MLAAttentionSpec``,
      ``SlidingWindowSpec``, ``ChunkedLocalAttentionSpec``, ``MambaSpec``): KV heads per
      rank ``max(1, kv_heads // tp)``; the MLA latent is not sharded by TP.
    - DeepSeek-V3 ``config.json`` (kv_lora_rank 512, qk_rope_head_dim 64): 576 values
      per layer and token.
    - ``v_head_dim`` of a non-MLA layer is its value head size (vLLM ``Attention`` takes
      ``head_size_v``; ``FullAttentionSpec`` pages ``head_size + head_size_v``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sizing.errors import ConfigError, gettext_noop
from sizing.model.layer_kinds import LayerKind as LayerKind
from sizing.model.recurrent import DTYPE_BYTES, RecurrentState

GROWING_KINDS = frozenset({LayerKind.FULL, LayerKind.MLA})
"""Layer kinds whose cache grows with every token of a conversation."""

WINDOWED_KINDS = frozenset({LayerKind.SLIDING, LayerKind.CHUNKED})
"""Layer kinds that hold at most ``window_tokens`` tokens per conversation."""

ATTENTION_KINDS = GROWING_KINDS | WINDOWED_KINDS
"""Layer kinds that store keys and values per token."""


@dataclass(frozen=True)
class Layer:
    """One decoder layer's cache geometry.

    Attributes:
        kind: how the layer stores its cache.
        kv_heads: KV heads (1 for MLA, whose latent is shared by all heads).
        k_head_dim: values per key vector (MLA: ``kv_lora_rank + qk_rope_head_dim``).
        v_head_dim: values per value vector (0 for MLA: the latent holds both).
        window_tokens: tokens a windowed layer keeps; ``None`` for growing layers.
        state: the fixed per-sequence state of a linear-attention or Mamba mixer
            (Falcon-H1 layers have both attention and a state).
    """

    kind: LayerKind
    kv_heads: int = 0
    k_head_dim: int = 0
    v_head_dim: int = 0
    window_tokens: int | None = None
    state: RecurrentState | None = None

    def kv_heads_per_rank(self, tp: int = 1) -> int:
        """KV heads one rank holds: split over ``tp`` and replicated when ``tp`` exceeds
        them (``max(1, kv_heads // tp)``, vLLM ``ModelConfig.get_num_kv_heads``); 1 for
        MLA, whose latent is replicated on every rank."""
        if self.kind is LayerKind.MLA:
            return 1
        return max(1, self.kv_heads // tp)

    def values_per_token(self, tp: int = 1) -> int:
        """Cached values one token adds to this layer on one tensor-parallel rank.

        Linear, Mamba and cache-free layers add nothing per token.
        """
        if self.kind not in ATTENTION_KINDS:
            return 0
        if self.kind is LayerKind.MLA:
            return self.k_head_dim
        return self.kv_heads_per_rank(tp) * (self.k_head_dim + self.v_head_dim)

    def state_bytes(self, model_dtype_bytes: int = 2, tp: int = 1) -> int:
        """Fixed bytes per sequence on one rank (0 without a recurrent state)."""
        return self.state.bytes_per_rank(tp, model_dtype_bytes) if self.state else 0


@dataclass(frozen=True)
class Architecture:
    """What the sizing needs from a model's ``config.json``.

    Attributes:
        model_type: the config's ``model_type`` (of ``text_config`` for wrappers).
        layers: one entry per decoder layer, in order.
        num_attention_heads: query heads (TP must divide them).
        num_kv_heads: KV heads of the full-attention layers.
        hidden_size: model width.
        vocab_size: vocabulary size, from the config or its class default (0: neither
            gives one; the memory model refuses it, :func:`require_vocab_size`).
        max_context_tokens: ``max_position_embeddings`` (the longest context).
        dtype: the checkpoint's activation dtype (``torch_dtype``/``dtype``).
        assumptions: codes of :data:`sizing.model.config_reader.ASSUMPTIONS` for each
            default of transformers the config relied on (a field it does not set), in a
            fixed order.
    """

    model_type: str
    layers: tuple[Layer, ...]
    num_attention_heads: int
    num_kv_heads: int
    hidden_size: int
    vocab_size: int
    max_context_tokens: int
    dtype: str
    assumptions: tuple[str, ...] = ()

    @property
    def num_layers(self) -> int:
        """Decoder layers."""
        return len(self.layers)

    @cached_property
    def layer_groups(self) -> tuple[tuple[Layer, int], ...]:
        """Each distinct layer with the number of layers like it, in first-seen order (most
        models have one or two kinds of layer, so sums over the layers take a few terms)."""
        counts: dict[Layer, int] = {}
        for layer in self.layers:
            counts[layer] = counts.get(layer, 0) + 1
        return tuple(counts.items())

    @cached_property
    def layer_group_index(self) -> tuple[int, ...]:
        """For each layer in order, its position in :attr:`layer_groups`."""
        position = {layer: i for i, (layer, _count) in enumerate(self.layer_groups)}
        return tuple(position[layer] for layer in self.layers)

    def count(self, kind: LayerKind) -> int:
        """Layers of ``kind``."""
        return sum(1 for layer in self.layers if layer.kind is kind)

    @property
    def uses_mla(self) -> bool:
        """True when the attention layers store an MLA latent."""
        return any(layer.kind is LayerKind.MLA for layer, _count in self.layer_groups)

    @property
    def model_dtype_bytes(self) -> int:
        """Bytes of one value in the model dtype (2 for bf16/fp16, 4 for fp32)."""
        return DTYPE_BYTES.get(self.dtype.lower(), 2)


def require_vocab_size(arch: Architecture) -> int:
    """The vocabulary, for the embeddings and the logits of the profile pass.

    Raises:
        ConfigError: when neither the config nor its class default gives one (a 0 would
            drop the logits from vLLM's activation peak and the embeddings from the
            weights).
    """
    if arch.vocab_size <= 0:
        raise ConfigError(
            "config.vocab_size",
            template=gettext_noop(
                "config.json has no vocab_size (and its model type has no default), which the "
                "memory model needs for the embeddings and the logits"
            ),
            code="config_vocab_missing",
        )
    return arch.vocab_size


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
            "kv_dtype",
            template=gettext_noop(
                "unknown KV-cache dtype %(got)r; use auto, bf16, fp16, fp32 or fp8"
            ),
            code="kv_dtype_unknown",
            values={"known": "auto, bf16, fp16, fp32, fp8", "got": kv_dtype},
        ) from None


def kv_bytes_per_token(arch: Architecture, kv_dtype: str, tp: int = 1) -> int:
    """Bytes one more token adds to a long conversation on one tensor-parallel rank.

    Only layers whose cache grows with the context count (full attention, MLA);
    windowed layers and fixed states do not. With ``tp=1`` this is the whole model's
    figure, the JSON summary's ``kv_bytes_per_token``.

    Seed example: Qwen3-32B, FP8 cache → 2 × 64 × 8 × 128 × 1 = 131,072 bytes.
    """
    per_value = kv_dtype_bytes(kv_dtype, arch)
    return sum(
        layer.values_per_token(tp) * per_value * count
        for layer, count in arch.layer_groups
        if layer.kind in GROWING_KINDS
    )


def conversation_bytes(arch: Architecture, kv_dtype: str, context_tokens: int, tp: int = 1) -> int:
    """Bytes one conversation of ``context_tokens`` holds on one tensor-parallel rank.

    Growing layers hold every token, windowed layers at most their window, linear and
    Mamba layers their fixed state (in the model dtype unless the config names a state
    dtype). Seed example: 8,192 tokens of Qwen3-32B with an FP8 cache = 1 GiB.

    Raises:
        ValueError: if ``context_tokens`` is not positive.
    """
    if context_tokens <= 0:
        raise ValueError(f"context_tokens must be positive, got {context_tokens}")
    per_value = kv_dtype_bytes(kv_dtype, arch)
    total = 0
    for layer, count in arch.layer_groups:
        tokens = context_tokens
        if layer.kind in WINDOWED_KINDS and layer.window_tokens:
            tokens = min(context_tokens, layer.window_tokens)
        total += layer.values_per_token(tp) * per_value * tokens * count
        total += layer.state_bytes(arch.model_dtype_bytes, tp) * count
    return total
