"""A model's layer geometry from its ``config.json`` and the KV-cache bytes it implies.

Each decoder layer keeps per token, for every KV head, a key and a value vector:
``2 × kv_heads × head_dim × bytes`` (full attention, MHA and GQA). Multi-head latent
attention (MLA) keeps one compressed latent of ``kv_lora_rank + qk_rope_head_dim``
values instead, with no factor 2. Sliding-window and chunked-local layers keep at most
their window of tokens; linear-attention and Mamba layers keep a fixed state per
sequence (see :mod:`sizing.recurrent`).

Sources:
    - seed document: "2 × Layer × KV-Heads × Head-Dimension × Bytes pro Wert", Qwen3-32B
      64 layers, 8 KV heads, head_dim 128 → 128 KiB per token with an FP8 cache.
    - vLLM ``vllm/v1/kv_cache_interface.py`` (``FullAttentionSpec``, ``MLAAttentionSpec``,
      ``SlidingWindowSpec``, ``ChunkedLocalAttentionSpec``, ``MambaSpec``): KV heads per
      rank ``max(1, kv_heads // tp)``; the MLA latent is not sharded by TP.
    - DeepSeek-V3 ``config.json`` (kv_lora_rank 512, qk_rope_head_dim 64): 576 values
      per layer and token.
    - transformers configs: Gemma 2 alternates sliding and global layers (layer 0
      sliding), Gemma 3 ``sliding_window_pattern`` 6, Llama 4 ``no_rope_layers`` (1 =
      chunked local layer, 0 = global NoPE layer), Qwen3-Next ``full_attention_interval``,
      Jamba ``attn_layer_period``/``attn_layer_offset``, Nemotron-H
      ``hybrid_override_pattern`` (M Mamba-2, * attention, - MLP, E MoE).
    - ``v_head_dim`` of a non-MLA layer is its value head size (vLLM ``Attention`` takes
      ``head_size_v``; ``FullAttentionSpec`` pages ``head_size + head_size_v``); MiMo-V2
      sliding layers use ``swa_num_key_value_heads``, ``swa_head_dim``,
      ``swa_v_head_dim`` and ``sliding_window_size``
      (``vllm/model_executor/models/mimo_v2_flash.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sizing.config_bounds import (
    MISSING_FIELD,
    NOT_NON_NEGATIVE_INT,
    NOT_POSITIVE_INT,
    check_config_bounds,
)
from sizing.errors import ConfigError, gettext_noop
from sizing.layer_kinds import LayerKind as LayerKind
from sizing.layer_kinds import layer_kinds
from sizing.recurrent import DTYPE_BYTES, RecurrentState, recurrent_state

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
        assumptions: codes of :data:`ASSUMPTIONS` for each default of transformers the
            config relied on (a field it does not set), in a fixed order.
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


ASSUMPTIONS = {
    "kv_heads_mha": gettext_noop(
        "config.json has no num_key_value_heads: sized as multi-head attention, one KV head "
        "per attention head (transformers' default)"
    ),
    "head_dim_from_hidden": gettext_noop(
        "config.json has no head_dim: sized with hidden_size / num_attention_heads "
        "(transformers' default)"
    ),
}
"""English wording of each assumed default (the page translates the same text).
Source: transformers' ``LlamaConfig`` and ``Qwen3Config`` set ``num_key_value_heads =
num_attention_heads`` when it is ``None``, and the attention modules use ``head_dim =
hidden_size // num_attention_heads`` when the config has no ``head_dim``."""


# transformers/vLLM config-class defaults that apply when a config.json omits the key
# (Hugging Face fills absent keys from the class). Sources: vLLM
# ``vllm/transformers_utils/configs/nemotron_h.py`` (NemotronHConfig docstring);
# transformers ``Gemma3TextConfig`` (vocab_size 262208), ``GraniteConfig`` (32000),
# ``LlamaConfig`` (32000), ``MistralConfig`` (32000).
_CONFIG_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "gemma3_text": {"vocab_size": 262208},
    "granite": {"vocab_size": 32000},
    "llama": {"vocab_size": 32000},
    "mistral": {"vocab_size": 32000},
    "nemotron_h": {
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "attention_head_dim": 128,
        "mamba_num_heads": 128,
        "mamba_head_dim": 64,
        "n_groups": 8,
        "ssm_state_size": 128,
        "conv_kernel": 4,
        "vocab_size": 131072,
    },
}


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


CLASS_VOCAB: Mapping[str, int] = {
    model_type: int(defaults["vocab_size"])
    for model_type, defaults in _CONFIG_DEFAULTS.items()
    if "vocab_size" in defaults
}
"""``vocab_size`` of each config class that has a default, by ``model_type``."""


def _with_defaults(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    defaults = _CONFIG_DEFAULTS.get(str(cfg.get("model_type") or ""))
    if not defaults:
        return cfg
    merged = dict(defaults)
    merged.update({k: v for k, v in cfg.items() if v is not None})
    return merged


def _int(cfg: Mapping[str, Any], key: str, *, allow_zero: bool = False) -> int:
    value = cfg.get(key)
    if value is None:
        raise ConfigError(
            f"config.{key}",
            template=MISSING_FIELD,
            code="config_missing_field",
            values={"key": key},
        )
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(
            f"config.{key}",
            template=NOT_NON_NEGATIVE_INT if allow_zero else NOT_POSITIVE_INT,
            code="config_not_non_negative_int" if allow_zero else "config_not_positive_int",
            values={"key": key, "got": repr(value)},
        )
    return value


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


def from_config(config: Mapping[str, Any]) -> Architecture:
    """Parse a Hugging Face ``config.json`` into an :class:`Architecture`.

    Args:
        config: the parsed ``config.json`` (a multimodal wrapper's ``text_config`` is
            used when present).

    Returns:
        The layer geometry: MLA when ``kv_lora_rank`` is set (never from the name),
        windowed, global, linear-attention and Mamba layers from the config's layer
        pattern, the explicit ``head_dim`` when the config gives one; each default of
        transformers the config relied on is listed in ``assumptions``.

    Raises:
        ConfigError: naming the missing or malformed field, a count or size beyond what
            real models have (``sizing.config_bounds``), or saying which fields an
            unrecognised layer type would need.
    """
    check_config_bounds(config)
    cfg = _with_defaults(text_config(config))
    model_type = str(cfg.get("model_type") or config.get("model_type") or "")
    kinds = layer_kinds(cfg, model_type)
    n_heads = _int(cfg, "num_attention_heads")
    hidden = _int(cfg, "hidden_size")
    kv_heads = int(cfg.get("num_key_value_heads") or n_heads)
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    layers = tuple(_layer(cfg, kind, model_type, n_heads, kv_heads, hidden) for kind in kinds)
    return Architecture(
        model_type=model_type,
        layers=layers,
        num_attention_heads=n_heads,
        num_kv_heads=kv_heads,
        hidden_size=hidden,
        vocab_size=int(cfg.get("vocab_size") or 0),
        max_context_tokens=int(cfg.get("max_position_embeddings") or 0),
        dtype=dtype,
        assumptions=_assumptions(cfg, layers),
    )


def _assumptions(cfg: Mapping[str, Any], layers: tuple[Layer, ...]) -> tuple[str, ...]:
    """Codes of :data:`ASSUMPTIONS` for the defaults that shaped a full-attention layer."""
    attention = [layer for layer in layers if layer.kind in ATTENTION_KINDS - {LayerKind.MLA}]
    if not attention:
        return ()
    found = []
    if not cfg.get("num_key_value_heads"):
        found.append("kv_heads_mha")
    if not (cfg.get("head_dim") or cfg.get("attention_head_dim")):
        found.append("head_dim_from_hidden")
    return tuple(found)


def _head_dim(cfg: Mapping[str, Any], n_heads: int, hidden: int, key: str = "head_dim") -> int:
    explicit = cfg.get(key) or cfg.get("attention_head_dim")
    if explicit:
        if isinstance(explicit, bool) or not isinstance(explicit, int) or explicit <= 0:
            raise ConfigError(
                f"config.{key}",
                template=NOT_POSITIVE_INT,
                code="config_not_positive_int",
                values={"key": key, "got": repr(explicit)},
            )
        return explicit
    if hidden % n_heads:
        raise ConfigError(
            "config.head_dim",
            template=gettext_noop(
                "config.json has no head_dim, and hidden_size %(hidden)s is not a multiple of "
                "num_attention_heads %(heads)s"
            ),
            code="config_head_dim_indivisible",
            values={"hidden": hidden, "heads": n_heads},
        )
    return hidden // n_heads


def _layer(
    cfg: Mapping[str, Any], kind: LayerKind, model_type: str, n_heads: int, kv: int, hidden: int
) -> Layer:
    if kind is LayerKind.NONE:
        return Layer(kind)
    if kind in (LayerKind.LINEAR, LayerKind.MAMBA):
        return Layer(kind, state=recurrent_state(cfg, kind.value))
    if kind is LayerKind.MLA:
        latent = _int(cfg, "kv_lora_rank") + _int(cfg, "qk_rope_head_dim", allow_zero=True)
        return Layer(kind, kv_heads=1, k_head_dim=latent)
    head_dim = _head_dim(cfg, n_heads, hidden)
    v_dim = int(cfg.get("v_head_dim") or head_dim)
    window: int | None = None
    if kind is LayerKind.SLIDING and isinstance(cfg.get("hybrid_layer_pattern"), list):
        # MiMo-V2 sliding layers: their own KV heads and K/V head sizes (vLLM
        # vllm/model_executor/models/mimo_v2_flash.py, MiMoV2Attention per layer).
        kv = int(cfg.get("swa_num_key_value_heads") or kv)
        head_dim = int(cfg.get("swa_head_dim") or head_dim)
        v_dim = int(cfg.get("swa_v_head_dim") or head_dim)
        window = int(cfg.get("sliding_window_size") or _int(cfg, "sliding_window"))
    elif kind is LayerKind.SLIDING:
        window = _int(cfg, "sliding_window")
    elif kind is LayerKind.CHUNKED:
        window = _int(cfg, "attention_chunk_size")
    elif cfg.get("global_head_dim") or cfg.get("num_global_key_value_heads"):
        # Global layers with their own geometry (Gemma 4 style configs).
        head_dim = int(cfg.get("global_head_dim") or head_dim)
        v_dim = head_dim
        kv = int(cfg.get("num_global_key_value_heads") or kv)
    state = None
    if cfg.get("mamba_d_state") and model_type == "falcon_h1":
        # Falcon-H1 runs attention and a Mamba-2 mixer side by side in every layer.
        state = recurrent_state(cfg, LayerKind.MAMBA.value)
    return Layer(
        kind,
        kv_heads=kv,
        k_head_dim=head_dim,
        v_head_dim=v_dim,
        window_tokens=window,
        state=state,
    )


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
