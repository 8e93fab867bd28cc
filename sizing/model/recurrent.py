"""Fixed per-sequence state of linear-attention and Mamba layers.

A Mamba or linear-attention layer keeps, per sequence, a short convolution window and a
recurrent state whose size does not depend on the number of tokens:

- Mamba-2 (Nemotron-H, Granite 4 H, Falcon-H1, Bamba): conv state ``(kernel − 1) ×
  (intermediate + 2 × n_groups × state_size)``, SSM state ``heads × head_dim ×
  state_size``;
- Mamba-1 (Jamba): conv state ``(kernel − 1) × intermediate``, SSM state
  ``intermediate × state_size`` with ``intermediate = expand × hidden_size``;
- Gated DeltaNet (Qwen3-Next): conv state ``(kernel − 1) × (2 × key_heads × key_dim +
  value_heads × value_dim)``, recurrent state ``value_heads × key_dim × value_dim``;
- Kimi Delta Attention (``linear_attn_config``): conv states for q, k and v, ``3 ×
  (kernel − 1) × heads × head_dim``, recurrent state ``heads × head_dim²`` in fp32.

Channels and heads are split over tensor-parallel ranks; Mamba-2 groups that TP does
not divide are replicated (as KV heads are).

Sources: vLLM ``vllm/model_executor/layers/mamba/mamba_utils.py``
(``MambaStateShapeCalculator.mamba1_state_shape``, ``mamba2_state_shape``,
``gated_delta_net_state_shape``, ``kda_state_shape``) and ``MambaSpec.page_size_bytes``
in ``vllm/v1/kv_cache_interface.py``; checked against the reference's hybrid page
figures: Qwen3-Next-80B at TP 2 pads its 548,864-byte state page to 544 tokens ×
1,024 B (1.49 %), GLM-5.3-Flash at TP 8 pads a 542,720-byte KDA page (fp32 recurrent
state) to 640 × 1,024 B (20.75 %).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sizing.errors import ConfigError, gettext_noop

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
class RecurrentState:
    """The per-sequence state of one linear-attention or Mamba layer.

    Attributes:
        mixer: ``mamba1``, ``mamba2``, ``gdn`` or ``kda``.
        conv_width: tokens in the convolution window (kernel size − 1).
        conv_channels: convolution channels split over TP ranks.
        group_channels: convolution channels per Mamba-2 group (``2 × state_size``).
        groups: Mamba-2 groups (replicated when TP exceeds them); 0 otherwise.
        heads: recurrent-state heads split over TP ranks.
        values_per_head: recurrent-state values per head.
        ssm_dtype: dtype of the recurrent state, ``None`` for the model dtype.
    """

    mixer: str
    conv_width: int
    conv_channels: int
    heads: int
    values_per_head: int
    group_channels: int = 0
    groups: int = 0
    ssm_dtype: str | None = None

    def bytes_per_rank(self, tp: int = 1, model_dtype_bytes: int = 2) -> int:
        """Bytes of the state on one tensor-parallel rank.

        Args:
            tp: tensor parallel size (≥ 1).
            model_dtype_bytes: bytes per value of the model dtype (conv state dtype).
        """
        groups = max(1, self.groups // tp) if self.groups else 0
        conv = self.conv_width * (self.conv_channels // tp + groups * self.group_channels)
        ssm_bytes = DTYPE_BYTES[self.ssm_dtype] if self.ssm_dtype else model_dtype_bytes
        ssm = max(1, self.heads // tp) * self.values_per_head
        return conv * model_dtype_bytes + ssm * ssm_bytes


def _first(cfg: Mapping[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    raise ConfigError(
        f"config.{keys[0]}",
        template=gettext_noop(
            "config.json has no %(key)s, which the linear-attention or Mamba layers need to "
            "size their state"
        )
        if len(keys) == 1
        else gettext_noop(
            "config.json has none of %(key)s, which the linear-attention or Mamba layers need "
            "to size their state"
        ),
        code="config_missing_state_field",
        values={"key": ", ".join(keys)},
    )


def _ssm_dtype(cfg: Mapping[str, Any], default: str | None = None) -> str | None:
    name = cfg.get("mamba_ssm_cache_dtype")
    if isinstance(name, str) and name.lower() in DTYPE_BYTES:
        return name.lower()
    return default


def recurrent_state(cfg: Mapping[str, Any], kind: str) -> RecurrentState:
    """The state of a ``linear_attention`` or ``mamba`` layer from the config fields.

    Args:
        cfg: the text model's config.
        kind: ``"linear_attention"`` or ``"mamba"``.

    Raises:
        ConfigError: naming the first missing state field, or listing the fields an
            unknown mixer would need.
    """
    if kind == "linear_attention":
        kda = cfg.get("linear_attn_config")
        if isinstance(kda, Mapping):
            heads = _first(kda, ("num_heads",))
            head_dim = _first(kda, ("head_dim",))
            kernel = _first(kda, ("short_conv_kernel_size",))
            return RecurrentState(
                "kda",
                kernel - 1,
                3 * heads * head_dim,
                heads,
                head_dim * head_dim,
                ssm_dtype=_ssm_dtype(cfg, "float32"),
            )
        if cfg.get("linear_num_value_heads") or cfg.get("linear_key_head_dim"):
            nk = _first(cfg, ("linear_num_key_heads",))
            dk = _first(cfg, ("linear_key_head_dim",))
            nv = _first(cfg, ("linear_num_value_heads",))
            dv = _first(cfg, ("linear_value_head_dim",))
            kernel = _first(cfg, ("linear_conv_kernel_dim",))
            return RecurrentState(
                "gdn", kernel - 1, 2 * nk * dk + nv * dv, nv, dk * dv, ssm_dtype=_ssm_dtype(cfg)
            )
        raise ConfigError(
            "config.linear_attn_config",
            template=gettext_noop(
                "the linear-attention layers are of an unknown kind: the sizing needs "
                "linear_num_key_heads, linear_key_head_dim, linear_num_value_heads, "
                "linear_value_head_dim and linear_conv_kernel_dim (Gated DeltaNet) or "
                "linear_attn_config (Kimi Delta Attention)"
            ),
            code="config_linear_kind_unknown",
        )
    state = _first(cfg, ("ssm_state_size", "mamba_d_state", "state_size"))
    kernel = _first(cfg, ("conv_kernel", "mamba_d_conv", "mamba_conv_kernel"))
    heads_keys = ("mamba_num_heads", "mamba_n_heads")
    if any(cfg.get(k) for k in heads_keys):
        heads = _first(cfg, heads_keys)
        head_dim = _first(cfg, ("mamba_head_dim", "mamba_d_head"))
        groups = _first(cfg, ("n_groups", "mamba_n_groups"))
        inner = int(cfg.get("mamba_d_ssm") or heads * head_dim)
        return RecurrentState(
            "mamba2",
            kernel - 1,
            inner,
            heads,
            head_dim * state,
            group_channels=2 * state,
            groups=groups,
            ssm_dtype=_ssm_dtype(cfg),
        )
    expand = _first(cfg, ("mamba_expand", "expand"))
    hidden = _first(cfg, ("hidden_size",))
    inner = expand * hidden
    return RecurrentState("mamba1", kernel - 1, inner, inner, state, ssm_dtype=_ssm_dtype(cfg))
