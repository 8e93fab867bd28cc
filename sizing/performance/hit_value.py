"""What a returning user's hit is worth in the plan: reload against recompute, and TTFT.

The plan asks the performance model (:mod:`sizing.performance`) for the engine it
configures first, vLLM native offloading, on the plan's GPU and TP size:

- ``reload_ms``: the CPU tier's reload of one conversation's own tokens (the shared
  system prompt stays in the GPU prefix cache), a fixed cost plus the bytes of each
  rank over its own PCIe link at the effective rate measured for the engine
  (:mod:`sizing.performance.reload`);
- ``recompute_ms``: prefilling the same tokens again (:mod:`sizing.performance.prefill`);
- the TTFT of a returning user: a miss, and a hit from each tier the engine has a
  measured path for (:func:`sizing.performance.returning_user`), with the speedup.

Every figure names the measurements it rests on (:attr:`TransferEstimate.basis`); a card
estimated from its architecture family's measured class carries the band and a note
saying so. A GPU outside every family gets no figures, only the "no measured basis for
…" sentence: the plan never extrapolates silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from sizing.model.spec import ModelSpec
from sizing.performance import (
    NEW_TOKENS_PER_TURN,
    Basis,
    ModelShape,
    NoMeasuredBasis,
    ReturningUser,
    model_shape,
    returning_user,
)
from sizing.performance import prefill as perf_prefill
from sizing.performance import reload as perf_reload

PLAN_ENGINE = "vllm"
"""The engine the plan's timing figures are for (vLLM native offloading, the seed's)."""

CURVE_FIRST_TOKENS = 1024
CURVE_MAX_POINTS = 8
"""The TTFT-against-context curve: powers of two from 1,024 tokens to the first power of
two at or above twice the plan's context (at most the model's limit), at most 8 points,
the plan's own context added."""


@dataclass(frozen=True)
class TransferEstimate:
    """Reload against recompute for one conversation, and a returning user's TTFT.

    Attributes:
        reload_ms: reloading the conversation's own tokens from the CPU tier, ms
            (``None`` without a measured basis).
        recompute_ms: prefilling them again, ms (``None`` likewise).
        effective_gbs: the reload's bytes per rank ÷ its time, GB/s (0 likewise).
        returning: the TTFT of a returning user, miss and each tier, or ``None``.
        basis: the measurements the figures rest on, or ``None``.
        no_basis: the "no measured basis for …" sentence when there are no figures.
        shape, gpu_slug, tp, max_context_tokens: what the TTFT curve is evaluated for.
    """

    reload_ms: float | None
    recompute_ms: float | None
    effective_gbs: float
    returning: ReturningUser | None
    basis: Basis | None
    no_basis: str = ""
    shape: ModelShape | None = field(default=None, repr=False, compare=False)
    gpu_slug: str = ""
    tp: int = 1
    max_context_tokens: int = 0
    new_tokens: int = NEW_TOKENS_PER_TURN

    @cached_property
    def _curve(self) -> tuple[dict[str, Any], ...]:
        return tuple(self._points())

    def curve(self) -> list[dict[str, Any]]:
        """TTFT against context for a returning user (evaluated once per estimate): see
        :meth:`_points`."""
        return [dict(p, hit_ms=dict(p["hit_ms"])) for p in self._curve]

    def _points(self) -> list[dict[str, Any]]:
        """TTFT against context for a returning user: per context (see
        :data:`CURVE_MAX_POINTS`) ``context_tokens``, ``miss_ms`` and ``hit_ms`` per tier
        (``None`` for a tier without a measured path); empty without a measured basis."""
        if self.returning is None or self.shape is None:
            return []
        ctx = self.returning.context_tokens
        top = max(CURVE_FIRST_TOKENS, 2 * ctx)
        if self.max_context_tokens:
            top = min(top, self.max_context_tokens)
        points = {ctx}
        tokens = CURVE_FIRST_TOKENS
        while tokens <= top and len(points) < CURVE_MAX_POINTS:
            points.add(tokens)
            tokens *= 2
        out = []
        for n in sorted(points):
            r = returning_user(
                self.shape,
                engine=PLAN_ENGINE,
                gpu=self.gpu_slug,
                tp=self.tp,
                context_tokens=n,
                new_tokens=self.new_tokens,
            )
            hits = {h.tier: None if h.ttft_ms is None else round(h.ttft_ms, 1) for h in r.hits}
            out.append({"context_tokens": n, "miss_ms": round(r.miss_ms, 1), "hit_ms": hits})
        return out

    @property
    def speedup(self) -> float | None:
        """A returning user's TTFT speedup from the CPU tier (miss ÷ hit), or ``None``."""
        if self.returning is None:
            return None
        return self.returning.tier("cpu").speedup

    @property
    def cpu_hit_ms(self) -> float | None:
        """A returning user's TTFT from the CPU tier, ms, or ``None``."""
        return None if self.returning is None else self.returning.tier("cpu").ttft_ms

    @property
    def miss_ms(self) -> float | None:
        """A returning user's TTFT without a hit (full prefill), ms, or ``None``."""
        return None if self.returning is None else self.returning.miss_ms

    @property
    def notes(self) -> tuple[str, ...]:
        """What the reader should know about the figures: a card without a measurement,
        a measurement transferred from another card, tiers without a measured path."""
        out = [self.no_basis] if self.no_basis else []
        if self.basis is not None and self.basis.note:
            out.append(self.basis.note)
        if self.returning is not None:
            out += [h.no_basis for h in self.returning.hits if h.no_basis]
        return tuple(out)


def estimate(
    *,
    model: ModelSpec,
    kv_dtype: str,
    gpu_slug: str,
    tp: int,
    context_tokens: int,
    shared_prompt_tokens: int = 0,
    new_tokens: int = NEW_TOKENS_PER_TURN,
) -> TransferEstimate:
    """The plan's reload, recompute and TTFT figures.

    Args:
        model: the model.
        kv_dtype: the KV-cache dtype.
        gpu_slug: catalog slug of the card.
        tp: the instance's tensor parallel size.
        context_tokens: tokens of a full conversation.
        shared_prompt_tokens: the system prompt every conversation shares (on the GPU).
        new_tokens: tokens a returning turn prefills on a hit: the previous answer and
            the new prompt of the plan's traffic (``sizing.traffic.profile``: output + new prompt
            tokens per turn, as the serving model prefills them, ``sizing.serving.load``);
            :data:`~sizing.performance.ttft.NEW_TOKENS_PER_TURN` without traffic.

    Never raises for a card or path without a measurement: the estimate then carries
    ``no_basis`` and no figures.
    """
    shape = model_shape(model, kv_dtype)
    own = max(1, context_tokens - shared_prompt_tokens)
    try:
        reload = perf_reload(shape, engine=PLAN_ENGINE, tier="cpu", gpu=gpu_slug, tp=tp, tokens=own)
        recompute = perf_prefill(
            shape, gpu=gpu_slug, tp=tp, new_tokens=own, cached_tokens=shared_prompt_tokens
        )
        returning = returning_user(
            shape,
            engine=PLAN_ENGINE,
            gpu=gpu_slug,
            tp=tp,
            context_tokens=context_tokens,
            new_tokens=new_tokens,
        )
    except NoMeasuredBasis as exc:
        return TransferEstimate(None, None, 0.0, None, None, exc.message)
    cpu = returning.tier("cpu").hit
    basis = recompute.basis.joined(reload.basis)
    if cpu is not None:
        basis = basis.joined(cpu.basis)
    return TransferEstimate(
        reload_ms=reload.total_ms,
        recompute_ms=recompute.total_ms,
        effective_gbs=reload.effective_gbs,
        returning=returning,
        basis=basis,
        shape=shape,
        gpu_slug=gpu_slug,
        tp=tp,
        max_context_tokens=model.architecture.max_context_tokens,
        new_tokens=new_tokens,
    )
