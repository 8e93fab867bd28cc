"""Bounds on the counts and sizes a ``config.json`` may give, before anything is built.

The engine builds one entry per layer, sums per expert and multiplies heads by head
sizes: a config that claims a million layers or a billion experts (an upload, or a
public Hub repo anyone can create) would hold a worker for minutes and gigabytes. Every
count and size the sizing reads is therefore bounded to what real models have, with
room to grow: each bound is at least 8 times the largest value among the 73 models of
the bundled catalog (``sizing/data/models.json``), rounded up to a power of two. The
largest catalog values, for the record: 126 layers and 16,384 hidden (Llama 3.1 405B),
128 heads (Llama 3.1 405B, DeepSeek V3), 512 experts (Qwen3-Next 80B), vocabulary
262,208 (Gemma 3), context 10,485,760 (Llama 4 Scout), head dim 256 (Gemma 2,
Qwen3-Next), intermediate 53,248 (Llama 3.1 405B), KV-LoRA rank 512 (DeepSeek V3).

The counts in :data:`POSITIVE` must also be at least 1 where the config gives them: a
zero is no model (transformers builds ``nn.ModuleList`` of ``num_hidden_layers`` layers
and divides by ``num_attention_heads``), and the sizing would otherwise read a zero
``num_key_value_heads`` as "unset" and size multi-head attention. ``head_dim`` may be 0
only in an MLA config (``kv_lora_rank`` set), which never reads it (GLM-5.3-Flash in
the catalog ships ``head_dim: 0``). ``max_position_embeddings`` may not be negative (0
and a missing key both mean "no stated limit" to :mod:`sizing.model.config_reader`; a
negative limit would refuse every context). A float, or a JSON ``true``/``false``
(which Python reads as 1 and 0), is no count: transformers passes it on to
``torch.nn.Linear``, which accepts only integers. The KV heads must divide the
attention heads: transformers' ``repeat_kv`` (``models/llama/modeling_llama.py``)
repeats each KV head ``num_attention_heads // num_key_value_heads`` times, and vLLM's
attention backends (``vllm/attention/layer.py``: ``num_heads % num_kv_heads == 0``)
assert the same, so no engine serves a config where they do not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sizing.errors import ConfigError, gettext_noop

NOT_POSITIVE_INT = gettext_noop(
    "the config.json field %(key)s must be a positive integer, got %(got)s"
)
NOT_NON_NEGATIVE_INT = gettext_noop(
    "the config.json field %(key)s must be a non-negative integer, got %(got)s"
)
NOT_WHOLE_NUMBER = gettext_noop("the config.json field %(key)s must be a whole number, got %(got)s")
MISSING_FIELD = gettext_noop(
    "config.json has no %(key)s, which this architecture needs to size the KV cache"
)
"""English templates of the config.json errors that several parsers raise (this module,
:mod:`sizing.model.config_reader`, :mod:`sizing.model.layer_kinds`)."""

_LAYERS = 1_024
_HEADS = 2_048
_HEAD_DIM = 2_048
_HIDDEN = 131_072
_INTERMEDIATE = 524_288
_EXPERTS = 4_096
_CONTEXT = 134_217_728
_SMALL = 64

BOUNDS: Mapping[str, int] = {
    # depth
    "num_hidden_layers": _LAYERS,
    "num_layers": _LAYERS,
    "n_layer": _LAYERS,
    "first_k_dense_replace": _LAYERS,
    "max_window_layers": _LAYERS,
    "num_nextn_predict_layers": _SMALL,
    "num_mtp_modules": _SMALL,
    # heads
    "num_attention_heads": _HEADS,
    "num_key_value_heads": _HEADS,
    "linear_num_key_heads": _HEADS,
    "linear_num_value_heads": _HEADS,
    "mamba_n_heads": _HEADS,
    "mamba_num_heads": _HEADS,
    "index_n_heads": _HEADS,
    # head and state sizes
    "head_dim": _HEAD_DIM,
    "attention_head_dim": _HEAD_DIM,
    "v_head_dim": _HEAD_DIM,
    "qk_head_dim": _HEAD_DIM,
    "qk_nope_head_dim": _HEAD_DIM,
    "qk_rope_head_dim": _HEAD_DIM,
    "linear_key_head_dim": _HEAD_DIM,
    "linear_value_head_dim": _HEAD_DIM,
    "mamba_d_head": _HEAD_DIM,
    "mamba_head_dim": _HEAD_DIM,
    "mamba_d_state": _HEAD_DIM,
    "ssm_state_size": _HEAD_DIM,
    "index_head_dim": _HEAD_DIM,
    "kv_lora_rank": 8_192,
    "q_lora_rank": 16_384,
    "mamba_expand": _SMALL,
    "mamba_d_conv": _SMALL,
    "conv_kernel": _SMALL,
    "linear_conv_kernel_dim": _SMALL,
    # widths
    "hidden_size": _HIDDEN,
    "intermediate_size": _INTERMEDIATE,
    "intermediate_size_mlp": _INTERMEDIATE,
    "moe_intermediate_size": _INTERMEDIATE,
    "shared_expert_intermediate_size": _INTERMEDIATE,
    "moe_shared_expert_intermediate_size": _INTERMEDIATE,
    "shared_intermediate_size": _INTERMEDIATE,
    # experts
    "n_routed_experts": _EXPERTS,
    "num_local_experts": _EXPERTS,
    "num_experts": _EXPERTS,
    "n_shared_experts": _SMALL,
    "num_experts_per_tok": 128,
    "experts_per_token": 128,
    # vocabulary and context
    "vocab_size": 2_097_152,
    "max_position_embeddings": _CONTEXT,
    "sliding_window": _CONTEXT,
    "sliding_window_size": _CONTEXT,
    "attention_chunk_size": _CONTEXT,
}
"""The largest value each key may hold (see the module docstring for the rule)."""

LIST_KEYS: Mapping[str, int] = {"layer_types": _LAYERS, "layers_block_type": _LAYERS}
"""Per-layer lists: at most as many entries as there may be layers."""

OTHER_COUNT_BOUND = 1_048_576
"""Any other ``num_*`` count: the engine may loop over it; no real model comes near."""

POSITIVE = frozenset(
    {
        "num_hidden_layers",
        "num_layers",
        "n_layer",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "hidden_size",
        "vocab_size",
        "n_routed_experts",
        "num_local_experts",
        "num_experts",
        "num_experts_per_tok",
        "experts_per_token",
    }
)
"""Counts that must be at least 1 when present (``None`` means unset and is left alone)."""

NON_NEGATIVE = frozenset({"max_position_embeddings"})
"""Counts that must be at least 0 when present (0 means no stated limit)."""

SHOWN_DIGITS = 15
"""Integers with more digits are echoed in scientific notation, not digit by digit."""


def shown_value(value: int | float) -> int | str:
    """``value`` as an error sentence may quote it: an integer of at most
    :data:`SHOWN_DIGITS` digits as itself (a page groups its digits per language), else a
    short text (``"1e+300"``, ``"1.5"``, ``"about 1e+400"`` beyond a float's range)."""
    if isinstance(value, int) and abs(value) < 10**SHOWN_DIGITS:
        return value
    if isinstance(value, int):
        if abs(value) < 10**308:
            return f"{float(value):.3g}"
        return f"about 1e+{int(abs(value).bit_length() * math.log10(2))}"
    if abs(value) >= 10**SHOWN_DIGITS:
        return f"{value:.3g}"
    return repr(value)


def check_config_bounds(config: Mapping[str, Any]) -> None:
    """Refuse a config whose counts or sizes exceed what real models have.

    Checks the top level and a multimodal wrapper's ``text_config`` /
    ``language_config``: every key of :data:`BOUNDS`, every list of
    :data:`LIST_KEYS`, and every other integer ``num_*`` key against
    :data:`OTHER_COUNT_BOUND`. Values of other types are left to the parsers.

    Also refuses a zero or negative count of :data:`POSITIVE`, a negative one of
    :data:`NON_NEGATIVE`, a float, a boolean or a text (such as ``"32"``) where a count
    of :data:`BOUNDS` is required, and KV heads that do not divide the attention heads.

    Raises:
        ConfigError: on field ``config.<key>`` with code ``config_out_of_range`` (values
            ``key``, ``got``, ``max``), ``config_not_positive_int`` (``key``, ``got``),
            ``config_not_non_negative_int`` (``key``, ``got``),
            ``config_not_whole_number`` (``key``, ``got``) or
            ``config_kv_heads_indivisible`` (``heads``, ``kv_heads``). ``got`` is
            :func:`shown_value` of the config's value: never hundreds of digits (a text
            is quoted, cut after :data:`SHOWN_TEXT_CHARS` characters).
    """
    parts = [config]
    for wrapper in ("text_config", "language_config"):
        inner = config.get(wrapper)
        if isinstance(inner, Mapping):
            parts.append(inner)
    for part in parts:
        for key, value in part.items():
            bound = _bound(str(key), value)
            if bound is not None:
                got = shown_value(len(value) if isinstance(value, list) else value)
                raise ConfigError(
                    f"config.{key}",
                    template=gettext_noop(
                        "the config.json field %(key)s is %(got)s, more than any real model "
                        "has (at most %(max)s)"
                    ),
                    code="config_out_of_range",
                    values={"key": str(key), "got": got, "max": bound},
                )
            _check_count(part, str(key), value)
        _check_kv_heads(part)


SHOWN_TEXT_CHARS = 20
"""A text value is quoted up to this many characters in an error sentence."""


def _shown_text(value: str) -> str:
    """``value`` quoted for an error sentence, cut after :data:`SHOWN_TEXT_CHARS`."""
    cut = value[:SHOWN_TEXT_CHARS] + ("…" if len(value) > SHOWN_TEXT_CHARS else "")
    return f'"{cut}"'


def _check_count(part: Mapping[str, Any], key: str, value: Any) -> None:
    """Refuse a float or text count of :data:`BOUNDS` and a count of :data:`POSITIVE`
    below 1 (a text such as ``"32"`` is no number to transformers' ``nn.ModuleList``
    either, and would otherwise read as a missing key)."""
    if isinstance(value, str | float | bool) and key in BOUNDS:
        if isinstance(value, bool):
            got: int | str = "true" if value else "false"
        else:
            got = _shown_text(value) if isinstance(value, str) else shown_value(value)
        raise ConfigError(
            f"config.{key}",
            template=NOT_WHOLE_NUMBER,
            code="config_not_whole_number",
            values={"key": key, "got": got},
        )
    if not isinstance(value, int | float):
        return
    if key in NON_NEGATIVE and value < 0:
        raise ConfigError(
            f"config.{key}",
            template=NOT_NON_NEGATIVE_INT,
            code="config_not_non_negative_int",
            values={"key": key, "got": shown_value(value)},
        )
    if key not in POSITIVE or value >= 1:
        return
    if key == "head_dim" and value == 0 and part.get("kv_lora_rank"):
        return
    raise ConfigError(
        f"config.{key}",
        template=NOT_POSITIVE_INT,
        code="config_not_positive_int",
        values={"key": key, "got": shown_value(value)},
    )


def _check_kv_heads(part: Mapping[str, Any]) -> None:
    """Refuse KV heads that do not divide the attention heads (module docstring)."""
    heads = part.get("num_attention_heads")
    kv_heads = part.get("num_key_value_heads")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (heads, kv_heads)):
        return
    assert isinstance(heads, int) and isinstance(kv_heads, int)
    if kv_heads >= 1 and heads % kv_heads:
        raise ConfigError(
            "config.num_key_value_heads",
            template=gettext_noop(
                "the config.json field num_key_value_heads (%(kv_heads)s) must divide "
                "num_attention_heads (%(heads)s): each KV head serves a whole group of "
                "attention heads"
            ),
            code="config_kv_heads_indivisible",
            values={"heads": heads, "kv_heads": kv_heads},
        )


def _bound(key: str, value: Any) -> int | None:
    """The bound ``value`` exceeds, else ``None``."""
    if isinstance(value, list):
        limit = LIST_KEYS.get(key)
        return limit if limit is not None and len(value) > limit else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    limit = BOUNDS.get(key)
    if limit is None and key.startswith("num_"):
        limit = OTHER_COUNT_BOUND
    return limit if limit is not None and value > limit else None
