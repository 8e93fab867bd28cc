"""The cache kind of every decoder layer, read from a config's layer pattern.

Sources: transformers configs: Gemma 2 alternates sliding and global layers (layer 0
sliding), Gemma 3 ``sliding_window_pattern`` 6, Llama 4 ``no_rope_layers`` (1 = chunked
local layer, 0 = global NoPE layer, else every ``nope_layer_interval``-th layer global),
Qwen3-Next ``full_attention_interval``, Jamba ``attn_layer_period``/``attn_layer_offset``,
Nemotron-H ``hybrid_override_pattern`` (M Mamba-2, * attention, - MLP, E MoE), Qwen2
``use_sliding_window`` with ``max_window_layers``; MLA whenever ``kv_lora_rank`` is set;
MiMo-V2 ``hybrid_layer_pattern`` (1 = sliding-window layer with the ``swa_*`` geometry,
0 = full attention: vLLM ``vllm/model_executor/models/mimo_v2_flash.py`` and SGLang's
``mimo_v2_flash.py`` read it so).

Configs whose layout keys the sizing does not read are refused with the keys named
(:data:`UNREAD_LAYOUT_KEYS`), never sized by a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from sizing.errors import ConfigError, gettext_noop
from sizing.model.config_bounds import MISSING_FIELD

HYBRID_LAYER_PATTERN = gettext_noop(
    "hybrid_layer_pattern must list 0 (full attention) or 1 (sliding window) for each of the "
    "%(layers)s layers"
)
"""The error of a ``hybrid_layer_pattern`` that is no such list."""


class LayerKind(StrEnum):
    """How one decoder layer stores its cache."""

    FULL = "full_attention"
    SLIDING = "sliding_attention"
    CHUNKED = "chunked_attention"
    MLA = "mla"
    LINEAR = "linear_attention"
    MAMBA = "mamba"
    NONE = "no_cache"


# Default sliding-window patterns of model types whose config may omit it: every
# ``pattern``-th layer is global. Sources: transformers ``Gemma2Config`` (alternating,
# layer 0 sliding), ``Gemma3TextConfig`` (``sliding_window_pattern=6``),
# ``Cohere2Config`` (``sliding_window_pattern=4``).
_DEFAULT_SWA_PATTERN: Mapping[str, int] = {
    "gemma2": 2,
    "gemma3": 6,
    "gemma3_text": 6,
    "cohere2": 4,
}


_TYPE_NAMES: Mapping[str, LayerKind] = {
    "full_attention": LayerKind.FULL,
    "attention": LayerKind.FULL,
    "global_attention": LayerKind.FULL,
    "sliding_attention": LayerKind.SLIDING,
    "chunked_attention": LayerKind.CHUNKED,
    "linear_attention": LayerKind.LINEAR,
    "mamba": LayerKind.MAMBA,
    "mamba2": LayerKind.MAMBA,
    "deepseek_sparse_attention": LayerKind.MLA,
}

_PATTERN_CHARS: Mapping[str, LayerKind] = {
    "M": LayerKind.MAMBA,
    "*": LayerKind.FULL,
    "-": LayerKind.NONE,
    "E": LayerKind.NONE,
}


UNREAD_LAYOUT_KEYS = (
    "compress_ratios",
    "local_layer_ids",
    "swa_layers",
    "attention_window",
    "window_attention",
)
"""Config keys that give some layers another cache geometry and that the sizing does not
read (DeepSeek-V4 compression ratios, per-layer local/window lists of other families)."""

_SWA_KEYS = ("swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim")
"""Geometry of sliding layers that only :data:`hybrid_layer_pattern` layouts place."""


def _refuse_unread(cfg: Mapping[str, Any]) -> None:
    present = [k for k in UNREAD_LAYOUT_KEYS if cfg.get(k) not in (None, [], {})]
    if not isinstance(cfg.get("hybrid_layer_pattern"), list):
        present += [k for k in _SWA_KEYS if cfg.get(k) is not None]
    if present:
        raise ConfigError(
            f"config.{present[0]}",
            template=gettext_noop(
                "config.json sets %(keys)s, a layer layout the sizing does not read: the model "
                "is not sized rather than sized wrong"
            ),
            code="config_layout_unread",
            values={"keys": ", ".join(present)},
        )


def _hybrid_layer_pattern(pattern: list[Any], n_layers: int, attn: LayerKind) -> list[LayerKind]:
    if len(pattern) != n_layers or any(v not in (0, 1) or isinstance(v, bool) for v in pattern):
        raise ConfigError(
            "config.hybrid_layer_pattern",
            template=HYBRID_LAYER_PATTERN,
            code="config_hybrid_layer_pattern",
            values={"layers": n_layers},
        )
    return [LayerKind.SLIDING if v == 1 else attn for v in pattern]


def layer_kinds(cfg: Mapping[str, Any], model_type: str) -> list[LayerKind]:
    """Cache kind per layer from the config's layer pattern.

    Raises:
        ConfigError: naming a missing count, an unknown layer type or code, or layout
            keys the sizing does not read.
    """
    _refuse_unread(cfg)
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        unknown = sorted(set(pattern) - set(_PATTERN_CHARS))
        if unknown:
            raise ConfigError(
                "config.hybrid_override_pattern",
                template=gettext_noop(
                    "hybrid_override_pattern has unknown layer codes %(codes)s; known are M "
                    "(Mamba-2), * (attention), - (MLP) and E (MoE)"
                ),
                code="config_pattern_unknown",
                values={"codes": " ".join(unknown)},
            )
        return [_PATTERN_CHARS[c] for c in pattern]
    n_layers = cfg.get("num_hidden_layers")
    if isinstance(n_layers, bool) or not isinstance(n_layers, int) or n_layers <= 0:
        raise ConfigError(
            "config.num_hidden_layers",
            template=MISSING_FIELD,
            code="config_missing_field",
            values={"key": "num_hidden_layers"},
        )
    mla = bool(cfg.get("kv_lora_rank"))
    attn = LayerKind.MLA if mla else LayerKind.FULL
    hybrid = cfg.get("hybrid_layer_pattern")
    if isinstance(hybrid, list):
        return _hybrid_layer_pattern(hybrid, n_layers, attn)
    if hybrid is not None:
        raise ConfigError(
            "config.hybrid_layer_pattern",
            template=HYBRID_LAYER_PATTERN,
            code="config_hybrid_layer_pattern",
            values={"layers": n_layers},
        )
    types = cfg.get("layer_types")
    if isinstance(types, list) and types:
        if len(types) != n_layers:
            raise ConfigError(
                "config.layer_types",
                template=gettext_noop(
                    "layer_types lists %(listed)s layers but num_hidden_layers is %(layers)s"
                ),
                code="config_layer_types_count",
                values={"listed": len(types), "layers": n_layers},
            )
        unknown = sorted({str(t) for t in types} - set(_TYPE_NAMES))
        if unknown:
            raise ConfigError(
                "config.layer_types",
                template=gettext_noop(
                    "config.json names unknown layer types (%(types)s); the sizing knows "
                    "%(known)s: a new type needs its KV heads and head size, or its state "
                    "dimensions"
                ),
                code="config_layer_types_unknown",
                values={"types": ", ".join(unknown), "known": ", ".join(sorted(_TYPE_NAMES))},
            )
        return [attn if _TYPE_NAMES[t] is LayerKind.FULL else _TYPE_NAMES[t] for t in types]
    interval = cfg.get("full_attention_interval")
    if isinstance(interval, int) and interval > 0:
        return [attn if (i + 1) % interval == 0 else LayerKind.LINEAR for i in range(n_layers)]
    period = cfg.get("attn_layer_period")
    if isinstance(period, int) and period > 0:
        offset = int(cfg.get("attn_layer_offset") or 0)
        return [attn if i % period == offset else LayerKind.MAMBA for i in range(n_layers)]
    if mla:
        return [LayerKind.MLA] * n_layers
    if cfg.get("attention_chunk_size"):
        no_rope = cfg.get("no_rope_layers")
        if isinstance(no_rope, list) and len(no_rope) == n_layers:
            return [LayerKind.CHUNKED if flag else LayerKind.FULL for flag in no_rope]
        step = int(cfg.get("nope_layer_interval") or 4)
        return [
            LayerKind.FULL if (i + 1) % step == 0 else LayerKind.CHUNKED for i in range(n_layers)
        ]
    return _sliding_kinds(cfg, model_type, n_layers)


def _sliding_kinds(cfg: Mapping[str, Any], model_type: str, n_layers: int) -> list[LayerKind]:
    if not cfg.get("sliding_window") or cfg.get("use_sliding_window") is False:
        return [LayerKind.FULL] * n_layers
    pattern = cfg.get("sliding_window_pattern") or _DEFAULT_SWA_PATTERN.get(model_type)
    if isinstance(pattern, int) and pattern > 1:
        return [
            LayerKind.FULL if (i + 1) % pattern == 0 else LayerKind.SLIDING for i in range(n_layers)
        ]
    if cfg.get("use_sliding_window") and cfg.get("max_window_layers") is not None:
        # Qwen2-style: layers from max_window_layers on use the window.
        first = int(cfg["max_window_layers"])
        return [LayerKind.SLIDING if i >= first else LayerKind.FULL for i in range(n_layers)]
    return [LayerKind.SLIDING] * n_layers
