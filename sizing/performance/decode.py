"""Decode: time per output token (TPOT) at a batch size, and the throughput per GPU.

What callers pass: a :class:`~sizing.performance.shape.ModelShape`, a catalog GPU slug,
the TP size, the batch (sequences decoding together in one replica) and the tokens each
sequence holds. One evaluation takes a few microseconds.

The rule (roofline of one decode step, Williams et al. 2009 "Roofline"; docs/sizing.md §6):

``step_ms = max(bytes read ÷ memory rate, FLOPs ÷ compute rate) + TP communication +
step overhead``

- bytes read per rank: the weights once per step (for a mixture of experts the share
  of experts the batch touches, :func:`~sizing.performance.links.expert_share`) plus
  every sequence's KV cache (:meth:`ModelShape.kv_bytes_per_rank`), at the card's
  bandwidth times ``decode.memory_efficiency``;
- FLOPs: ``2 · (N_active + lm_head)`` per sequence plus attention over its context,
  at the prefill class's efficiencies (:mod:`~sizing.performance.calibration`);
- TP: two all-reduces of ``batch × hidden`` 16-bit values per layer
  (:mod:`~sizing.performance.links`); a fixed step overhead (scheduling, sampling).

TPOT is the step time; throughput per GPU is ``batch ÷ step ÷ TP``. The memory share
and the step overhead are planning assumptions until a decode measurement is added to
the calibration set (their status is in ``sizing/data/performance.json``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.hardware import catalog
from sizing.performance import links
from sizing.performance.calibration import Basis, constant, data, prefill_class
from sizing.performance.prefill import linear_tflops
from sizing.performance.shape import ModelShape


@dataclass(frozen=True)
class DecodeStep:
    """One decode step of a batch, ms, and what follows from it.

    Attributes:
        tpot_ms: time per output token of each sequence (the step time).
        memory_ms: reading the weights and the batch's KV cache.
        compute_ms: the step's FLOPs.
        communication_ms: TP all-reduces.
        overhead_ms: the fixed step overhead.
        batch: sequences in the step.
        tp: ranks that share it.
        basis: the measurements and assumptions the figure rests on.
    """

    tpot_ms: float
    memory_ms: float
    compute_ms: float
    communication_ms: float
    overhead_ms: float
    batch: int
    tp: int
    basis: Basis

    @property
    def memory_bound(self) -> bool:
        """True when reading memory, not the FLOPs, sets the step time."""
        return self.memory_ms >= self.compute_ms

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second of the whole replica."""
        return self.batch * 1e3 / self.tpot_ms

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Output tokens per second per GPU of the replica."""
        return self.tokens_per_s / self.tp


def decode(shape: ModelShape, *, gpu: str, tp: int, batch: int, context_tokens: int) -> DecodeStep:
    """One decode step of ``batch`` sequences that each hold ``context_tokens`` tokens.

    Args:
        shape: the model (:func:`~sizing.performance.shape.model_shape`).
        gpu: catalog slug of the card.
        tp: tensor parallel size of the replica.
        batch: sequences decoding together, ≥ 1.
        context_tokens: tokens in each sequence's KV cache, ≥ 1.

    Raises:
        SizingError: on field ``gpu`` for an unknown slug.
        NoMeasuredBasis: on field ``gpu`` when no measured class covers the card.
        ValueError: for a batch, context or TP size below 1.
    """
    if batch < 1 or context_tokens < 1 or tp < 1:
        raise ValueError(
            f"batch, context_tokens and tp must be at least 1, got {batch}, {context_tokens}, {tp}"
        )
    card = catalog.gpu(gpu)
    cls = prefill_class(card.slug, card.name)
    rate = links.memory_gbs(card) * 1e9
    kv = batch * shape.kv_bytes_per_rank(context_tokens, tp)
    memory_s = links.weights_read_s(shape, card, tp, batch) + (kv / rate if rate else 0.0)
    peak = linear_tflops(shape, card) * 1e12
    linear = 2.0 * (shape.active_params + shape.lm_head_params) * batch
    attn = batch * sum(
        g.layers * g.flops_per_pair * min(context_tokens, g.window_tokens or context_tokens)
        for g in shape.attention
    )
    compute_s = linear / (tp * cls.linear_efficiency * peak) + attn / (
        tp * cls.attention_efficiency * float(card.bf16_dense_tflops or 0.0) * 1e12
    )
    comm_s = links.allreduce_s(card, tp, shape.num_layers * 2, batch * shape.hidden_size * 2)
    overhead_ms = constant("decode", "step_overhead_ms")
    tpot_ms = (max(memory_s, compute_s) + comm_s) * 1e3 + overhead_ms
    basis = cls.basis.joined(Basis(tuple(data()["decode"]["fitted_on"]), data()["decode"]["note"]))
    return DecodeStep(
        tpot_ms=tpot_ms,
        memory_ms=memory_s * 1e3,
        compute_ms=compute_s * 1e3,
        communication_ms=comm_s * 1e3,
        overhead_ms=overhead_ms,
        batch=batch,
        tp=tp,
        basis=basis,
    )


def tpot_ms(shape: ModelShape, *, gpu: str, tp: int, batch: int, context_tokens: int) -> float:
    """:func:`decode` ``.tpot_ms`` (same arguments and errors)."""
    return decode(shape, gpu=gpu, tp=tp, batch=batch, context_tokens=context_tokens).tpot_ms


def decode_tokens_per_s_per_gpu(
    shape: ModelShape, *, gpu: str, tp: int, batch: int, context_tokens: int
) -> float:
    """:func:`decode` ``.tokens_per_s_per_gpu`` (same arguments and errors)."""
    step = decode(shape, gpu=gpu, tp=tp, batch=batch, context_tokens=context_tokens)
    return step.tokens_per_s_per_gpu
