"""A model's :class:`~sizing.model.architecture.Architecture` read from its ``config.json``.

The language-model part of a multimodal wrapper is read (:func:`text_config`), a key the
config omits takes its config class's default, each decoder layer's kind comes from the
config's layer pattern (:mod:`sizing.model.layer_kinds`) and its geometry from the config's
fields; each default of transformers the config relied on is named
(:data:`ASSUMPTIONS`).

Sources:
    - transformers configs: Gemma 2 alternates sliding and global layers (layer 0
      sliding), Gemma 3 ``sliding_window_pattern`` 6, Llama 4 ``no_rope_layers`` (1 =
      chunked local layer, 0 = global NoPE layer), Qwen3-Next ``full_attention_interval``,
      Jamba ``attn_layer_period``/``attn_layer_offset``, Nemotron-H
      ``hybrid_override_pattern`` (M Mamba-2, * attention, - MLP, E MoE).
    - DeepSeek-V3 ``config.json``: the MLA latent is ``kv_lora_rank + qk_rope_head_dim``
      values.
    - MiMo-V2 sliding layers use ``swa_num_key_value_heads``, ``swa_head_dim``,
      ``swa_v_head_dim`` and ``sliding_window_size``
      (``vllm/model_executor/models/mimo_v2_flash.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sizing.errors import ConfigError, gettext_noop
from sizing.model.architecture import ATTENTION_KINDS, Architecture, Layer, LayerKind
from sizing.model.config_bounds import (
    MISSING_FIELD,
    NOT_NON_NEGATIVE_INT,
    NOT_POSITIVE_INT,
    check_config_bounds,
)
from sizing.model.layer_kinds import layer_kinds
from sizing.model.recurrent import recurrent_state

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
            real models have (``sizing.model.config_bounds``), or saying which fields an
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
