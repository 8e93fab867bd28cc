"""Prefill time of ``n`` new tokens after ``c`` cached tokens, per GPU, model and TP.

What callers pass: a :class:`~sizing.performance.shape.ModelShape` (built once per model
with :func:`~sizing.performance.shape.model_shape`), a catalog GPU slug, the tensor
parallel size, the new tokens and the cached tokens ahead of them. One evaluation takes
a few microseconds; nothing is cached between calls.

The rule (docs/sizing.md §6, "TTFT of a miss ... ``a·n + b·n²``"):

``prefill_ms = fixed + max(compute, weights read) + TP communication``

- compute: ``2 · N_active · n`` FLOPs of weight matrix multiplies at the class's
  ``linear_efficiency`` of the card's dense rate (FP8 rate for FP8/INT8 weights, else
  16-bit), plus causal attention ``Σ layers · 2 · heads · (d_qk + d_v) · pairs(n, c)``
  at its ``attention_efficiency`` of the 16-bit rate, both split over the TP ranks.
  ``pairs(n, c) = n·c + n(n+1)/2`` (:func:`~sizing.performance.shape.attention_pairs`).
  Datasheet rates: ``sizing/data/hardware.json``.
- weights read: a short prefill cannot be faster than reading the weights it uses
  once (per rank; for a mixture of experts the experts ``n`` tokens touch, see
  :func:`~sizing.performance.links.expert_share`) at the card's memory bandwidth.
- TP communication: two all-reduces of the ``n × hidden`` 16-bit activations per layer
  (Megatron-LM, Shoeybi et al. 2019, §3), each moving ``2 (TP − 1) / TP`` of the bytes
  over each GPU's link (NCCL's ring bus bandwidth, nccl-tests ``doc/PERFORMANCE.md``)
  plus a per-operation latency (:mod:`~sizing.performance.links`).
- efficiencies and ``fixed`` per GPU class: :mod:`~sizing.performance.calibration`
  (fitted on the published TTFT sweeps; ``docs/accuracy.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.hardware import catalog
from sizing.performance import links
from sizing.performance.calibration import Basis, prefill_class
from sizing.performance.shape import ModelShape, attention_pairs


@dataclass(frozen=True)
class PrefillTime:
    """One prefill's time and its parts, ms.

    Attributes:
        total_ms: what the request waits for its prefill.
        linear_ms: weight matrix multiplies.
        attention_ms: causal attention over the new and cached tokens.
        weights_read_ms: the memory floor (reading the used weights once).
        communication_ms: TP all-reduces (0 at TP 1).
        fixed_ms: the class's per-request time.
        basis: the measurements the efficiencies come from.
    """

    total_ms: float
    linear_ms: float
    attention_ms: float
    weights_read_ms: float
    communication_ms: float
    fixed_ms: float
    basis: Basis

    @property
    def compute_bound(self) -> bool:
        """True when the FLOPs, not reading the weights, set the time."""
        return self.linear_ms + self.attention_ms >= self.weights_read_ms


def _check(new_tokens: int, cached_tokens: int, tp: int) -> None:
    if new_tokens < 1:
        raise ValueError(f"new_tokens must be at least 1, got {new_tokens}")
    if cached_tokens < 0:
        raise ValueError(f"cached_tokens must not be negative, got {cached_tokens}")
    if tp < 1:
        raise ValueError(f"tp must be at least 1, got {tp}")


def linear_tflops(shape: ModelShape, gpu: catalog.Gpu) -> float:
    """The dense tensor rate the weight multiplies run at, TFLOPS (FP8 for FP8/INT8
    weights on a card with FP8 tensor cores, else 16-bit)."""
    if shape.low_precision and gpu.fp8_dense_tflops:
        return float(gpu.fp8_dense_tflops)
    return float(gpu.bf16_dense_tflops or 0.0)


def prefill(
    shape: ModelShape, *, gpu: str, tp: int, new_tokens: int, cached_tokens: int = 0
) -> PrefillTime:
    """Time to prefill ``new_tokens`` tokens with ``cached_tokens`` already in the KV cache.

    Args:
        shape: the model (:func:`~sizing.performance.shape.model_shape`).
        gpu: catalog slug of the card (``h100-sxm``, ``rtx-pro-6000-se``…).
        tp: tensor parallel size (ranks that share the work).
        new_tokens: tokens to compute, ≥ 1.
        cached_tokens: tokens ahead of them whose KV is already on the GPU, ≥ 0.

    Raises:
        SizingError: on field ``gpu`` for an unknown slug.
        NoMeasuredBasis: on field ``gpu`` when no measured class covers the card.
        ValueError: for token counts or a TP size out of range.
    """
    _check(new_tokens, cached_tokens, tp)
    card = catalog.gpu(gpu)
    cls = prefill_class(card.slug, card.name)
    peak = linear_tflops(shape, card) * 1e12
    attn_peak = float(card.bf16_dense_tflops or 0.0) * 1e12
    linear_s = 2.0 * shape.active_params * new_tokens / (tp * cls.linear_efficiency * peak)
    attn_flops = sum(
        g.layers * g.flops_per_pair * attention_pairs(new_tokens, cached_tokens, g.window_tokens)
        for g in shape.attention
    )
    attention_s = attn_flops / (tp * cls.attention_efficiency * attn_peak)
    read_s = links.weights_read_s(shape, card, tp, new_tokens)
    comm_s = links.allreduce_s(card, tp, shape.num_layers * 2, new_tokens * shape.hidden_size * 2)
    total_s = cls.fixed_ms / 1e3 + max(linear_s + attention_s, read_s) + comm_s
    return PrefillTime(
        total_ms=total_s * 1e3,
        linear_ms=linear_s * 1e3,
        attention_ms=attention_s * 1e3,
        weights_read_ms=read_s * 1e3,
        communication_ms=comm_s * 1e3,
        fixed_ms=cls.fixed_ms,
        basis=cls.basis,
    )


def prefill_ms(
    shape: ModelShape, *, gpu: str, tp: int, new_tokens: int, cached_tokens: int = 0
) -> float:
    """:func:`prefill` ``.total_ms`` (same arguments and errors)."""
    return prefill(
        shape, gpu=gpu, tp=tp, new_tokens=new_tokens, cached_tokens=cached_tokens
    ).total_ms
