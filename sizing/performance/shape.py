"""What the performance model needs to know of a model: the work per token.

Callers build a :class:`ModelShape` once per model and KV dtype with
:func:`model_shape` and pass it to every prefill, decode, reload and TTFT function;
building it reads the config (tens of microseconds), evaluating with it does not.

Rules and their sources:

- Matrix-multiply FLOPs per token are ``2 × N_active`` (Kaplan et al. 2020, "Scaling
  Laws for Neural Language Models", §2.1). ``N_active`` is :func:`sizing.model.checkpoint.
  param_count` without the input embedding (a lookup, no FLOPs) and without an untied
  ``lm_head`` (vLLM computes logits only at the positions it samples, one per request,
  ``vllm/v1/worker/gpu_model_runner.py`` ``logits_indices``), and for a mixture of
  experts with only ``num_experts_per_tok`` of the routed experts per token
  (:func:`sizing.model.experts.expert_params`; Shazeer et al. 2017, top-k gating). For
  DeepSeek-V3 this gives 35.7 B (DeepSeek reports 37 B activated, embeddings and the
  output head included); for gpt-oss-120b 4.5 B (OpenAI's model card: 5.1 B active,
  embeddings included).
- Attention FLOPs per (query, key) pair and layer: ``2 × heads × (d_qk + d_v)`` (the
  ``QKᵀ`` and ``PV`` products). Full-attention and MLA layers see every earlier token,
  sliding-window and chunked layers at most their window; MLA prefill runs in the
  expanded form with ``qk_nope_head_dim + qk_rope_head_dim`` per query head and
  ``v_head_dim`` per value (DeepSeek-V2 paper, §2.1; vLLM ``MLACommonImpl`` prefill).
  Linear-attention and Mamba layers cost work linear in the tokens, which the
  parameter count already carries.
- Bytes per token a rank reloads and reads per decode step: :func:`sizing.model.architecture.
  conversation_bytes` on one tensor-parallel rank (KV heads split over TP and
  replicated when TP exceeds them; the MLA latent on every rank).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, SupportsIndex

from sizing.model.architecture import (
    ATTENTION_KINDS,
    WINDOWED_KINDS,
    Layer,
    LayerKind,
    kv_bytes_per_token,
    kv_dtype_bytes,
)
from sizing.model.checkpoint import WEIGHT_BITS, embedding_params, param_count
from sizing.model.config_reader import text_config
from sizing.model.experts import expert_params, routed_experts
from sizing.model.spec import ModelSpec

LOW_PRECISION_FORMATS = frozenset({"fp8", "w8a8", "int8"})
"""Weight formats whose matrix multiplies run on the GPU's FP8/INT8 tensor cores.
4-bit formats (AWQ, GPTQ, MXFP4, NVFP4 on pre-Blackwell kernels) dequantise to 16 bit
inside the GEMM, so their prefill runs at the 16-bit rate (vLLM Marlin and Triton MoE
kernels)."""


@dataclass(frozen=True)
class AttentionGroup:
    """Layers that share one attention geometry.

    Attributes:
        layers: how many decoder layers.
        flops_per_pair: FLOPs of one (query, key) pair in one such layer, whole model
            (``2 × heads × (d_qk + d_v)``), before the split over TP.
        window_tokens: keys one query sees at most (``None``: all earlier tokens).
    """

    layers: int
    flops_per_pair: int
    window_tokens: int | None


@dataclass(frozen=True)
class ModelShape:
    """The per-token work of one model at one KV dtype.

    Attributes:
        repo_id: the model.
        active_params: parameters multiplied per token in a prefill (see the module
            docstring), whole model.
        total_params: all parameters (:func:`sizing.model.checkpoint.param_count`).
        lm_head_params: the output projection (vocabulary × hidden), applied once per
            sampled token.
        weights_bytes: the checkpoint's bytes, whole model.
        expert_bytes: bytes of the routed experts (0 for a dense model).
        experts: routed experts per MoE layer (0 for a dense model).
        experts_per_token: experts each token is routed to (0 for a dense model).
        low_precision: True when the weights run on FP8/INT8 tensor cores.
        hidden_size: model width (the activations TP all-reduces).
        num_layers: decoder layers.
        attention: the attention geometry, grouped.
        kv_dtype: the KV-cache dtype the byte figures are for.
        kv_bytes_per_token: bytes one more token adds, whole model (TP 1).
        model: the model these figures were read from.
    """

    repo_id: str
    active_params: int
    total_params: int
    lm_head_params: int
    weights_bytes: int
    expert_bytes: int
    experts: int
    experts_per_token: int
    low_precision: bool
    hidden_size: int
    num_layers: int
    attention: tuple[AttentionGroup, ...]
    kv_dtype: str
    kv_bytes_per_token: int
    model: ModelSpec = field(repr=False, compare=False, hash=False)
    kv_layers: tuple[tuple[Layer, int], ...] = field(default=(), repr=False)
    kv_value_bytes: int = 2
    model_dtype_bytes: int = 2

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        """A shape :func:`model_shape` builds pickles as its model and KV dtype (found in
        that cache, or built again, when unpickled); any other pickles whole."""
        built = model_shape(self.model, self.kv_dtype)
        if built is self or built == self:
            return (model_shape, (self.model, self.kv_dtype))
        return super().__reduce_ex__(protocol)

    def kv_bytes_per_rank(self, tokens: int, tp: int) -> int:
        """Bytes one conversation of ``tokens`` tokens holds on one TP rank: the same
        figure as :func:`sizing.model.architecture.conversation_bytes` (windows and fixed
        states included), from the layers grouped once."""
        if tokens <= 0:
            return 0
        total = 0
        for layer, count in self.kv_layers:
            held = tokens
            if layer.kind in WINDOWED_KINDS and layer.window_tokens:
                held = min(tokens, layer.window_tokens)
            per_layer = layer.values_per_token(tp) * self.kv_value_bytes * held
            total += count * (per_layer + layer.state_bytes(self.model_dtype_bytes, tp))
        return total


def _attention_groups(model: ModelSpec) -> tuple[AttentionGroup, ...]:
    arch = model.architecture
    cfg = text_config(model.config)
    heads = arch.num_attention_heads
    groups: dict[tuple[int, int | None], int] = {}
    for layer in arch.layers:
        if layer.kind not in ATTENTION_KINDS:
            continue
        if layer.kind is LayerKind.MLA:
            d_qk = int(cfg.get("qk_nope_head_dim") or 128) + int(cfg.get("qk_rope_head_dim") or 0)
            d_v = int(cfg.get("v_head_dim") or cfg.get("qk_nope_head_dim") or 128)
        else:
            d_qk, d_v = layer.k_head_dim, layer.v_head_dim
        window = layer.window_tokens if layer.kind in WINDOWED_KINDS else None
        key = (2 * heads * (d_qk + d_v), window)
        groups[key] = groups.get(key, 0) + 1
    return tuple(AttentionGroup(n, flops, window) for (flops, window), n in groups.items())


@lru_cache(maxsize=128)
def model_shape(model: ModelSpec, kv_dtype: str = "auto") -> ModelShape:
    """The :class:`ModelShape` of ``model`` with a ``kv_dtype`` cache.

    A pure function of a frozen spec and a dtype, cached by value for the 128 latest
    (model, dtype) pairs: building one counts the config's parameters, and every plan of
    a model asks for it (the offline catalog holds about 80 models).

    Args:
        model: the model (catalog, Hub or upload).
        kv_dtype: ``auto``, ``bf16``, ``fp16``, ``fp32`` or ``fp8`` (vLLM
            ``--kv-cache-dtype``).

    Raises:
        ConfigError: when the config lacks a field the count needs.
        SizingError: for an unknown KV dtype.
    """
    return _build(model, kv_dtype)


def _build(model: ModelSpec, kv_dtype: str) -> ModelShape:
    cfg = text_config(model.config)
    total = param_count(model.config)
    embeddings = embedding_params(model.config)
    vocab_hidden = int(cfg.get("vocab_size") or 0) * int(cfg.get("hidden_size") or 0)
    experts = routed_experts(model.config)
    per_token = int(cfg.get("num_experts_per_tok") or cfg.get("moe_top_k") or 0) if experts else 0
    routed = expert_params(model.config)
    idle = routed * (1 - min(per_token, experts) / experts) if experts else 0.0
    active = max(1, round(total - embeddings - idle))
    bits = WEIGHT_BITS.get(model.weight_format, 16)
    expert_bytes = min(model.weights_bytes, round(routed * bits / 8))
    return ModelShape(
        repo_id=model.repo_id,
        active_params=active,
        total_params=total,
        lm_head_params=vocab_hidden,
        weights_bytes=model.weights_bytes,
        expert_bytes=expert_bytes,
        experts=experts,
        experts_per_token=per_token,
        low_precision=model.weight_format in LOW_PRECISION_FORMATS,
        hidden_size=model.architecture.hidden_size,
        num_layers=model.architecture.num_layers,
        attention=_attention_groups(model),
        kv_dtype=kv_dtype,
        kv_bytes_per_token=kv_bytes_per_token(model.architecture, kv_dtype),
        model=model,
        kv_layers=_grouped(model.architecture.layers),
        kv_value_bytes=kv_dtype_bytes(kv_dtype, model.architecture),
        model_dtype_bytes=model.architecture.model_dtype_bytes,
    )


def _grouped(layers: tuple[Layer, ...]) -> tuple[tuple[Layer, int], ...]:
    counts: dict[Layer, int] = {}
    for layer in layers:
        counts[layer] = counts.get(layer, 0) + 1
    return tuple(counts.items())


def attention_pairs(new_tokens: int, cached_tokens: int, window: int | None) -> float:
    """(query, key) pairs of a causal prefill of ``new_tokens`` after ``cached_tokens``.

    Query ``i`` (1-based) of the new tokens sees ``cached_tokens + i`` keys, at most
    ``window``: the sum is ``n·c + n(n+1)/2`` without a window, which grows with
    ``n·(n + c)``.
    """
    n, c = new_tokens, cached_tokens
    if n <= 0:
        return 0.0
    if window is None or c + n <= window:
        return n * c + n * (n + 1) / 2
    # Queries at positions p = c+1 … c+n see min(p, window) keys.
    below = max(0, min(c + n, window) - c)  # queries before the window fills
    full = n - below
    ramp = below * c + below * (below + 1) / 2
    return ramp + full * window
