"""Time to first token (TTFT) of a returning user: a miss, a hit from each tier, the speedup.

What callers pass: a :class:`~sizing.performance.shape.ModelShape`, the engine, a
catalog GPU slug, the TP size, the conversation's tokens and the tokens the user adds
in the new turn. One :func:`returning_user` evaluation (miss and four tiers) takes
about 0.03 ms (``docs/benchmarks.md``).

- miss: the whole prompt is prefilled (:func:`~sizing.performance.prefill.prefill`).
- hit from a tier: the cached part is reloaded (:func:`~sizing.performance.reload.
  reload`) and only the new part is prefilled, attending to the cached part.
- GPU prefix-cache hit: the ``gpu`` tier, nothing is copied.
- speedup: miss ÷ hit.
- every request served from text is tokenized first: ``frontend.tokenize_us_per_token``
  per prompt token (``sizing/data/performance.json``; benchmarks that pass token ids,
  such as the vLLM connector blog's with "De/Tokenization disabled", pass
  ``tokenize=False``).

A returning user's new turn holds the previous answer and the new question. A plan passes
its traffic's turn (``sizing.performance.hit_value.estimate``: output + new prompt tokens per turn);
without one, :data:`NEW_TOKENS_PER_TURN` = 69.5 + 214.5 ≈ 284 tokens, the mean prompt and
response lengths of LMSYS-Chat-1M (Zheng et al. 2023, Table 1). The previous answer is counted
as new because engines offload the prompt's blocks (LMCache ``save_decode_cache`` is
off by default); measured sweeps that reload the whole prompt pass ``new_tokens=1``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sizing.performance.calibration import TIERS, Basis, constant, data, missing_path
from sizing.performance.prefill import PrefillTime, prefill
from sizing.performance.reload import ReloadTime, reload
from sizing.performance.shape import ModelShape

NEW_TOKENS_PER_TURN = 284
"""Tokens a returning user's turn adds (see the module docstring)."""


def frontend_ms(prompt_tokens: int, tokenize: bool = True) -> float:
    """Time to tokenize a prompt of ``prompt_tokens`` tokens before it is scheduled, ms
    (0 when the request carries token ids)."""
    if not tokenize:
        return 0.0
    return prompt_tokens * constant("frontend", "tokenize_us_per_token") / 1e3


def frontend_basis(tokenize: bool = True) -> Basis:
    """The measurement the tokenization time rests on (empty without tokenization)."""
    return Basis(tuple(data()["frontend"]["fitted_on"])) if tokenize else Basis(())


@dataclass(frozen=True)
class HitTime:
    """TTFT of one hit.

    Attributes:
        ttft_ms: tokenization, reload (with its path's fitted hit correction, never
            below zero) and the prefill of the new tokens.
        reload: the reload of the cached tokens.
        prefill: the prefill of the new tokens.
        frontend_ms: tokenizing the whole prompt.
        basis: the measurements all three rest on.
    """

    ttft_ms: float
    reload: ReloadTime
    prefill: PrefillTime
    frontend_ms: float
    basis: Basis

    @property
    def correction_ms(self) -> float:
        """The reload path's fitted per-request hit correction as :func:`ttft_hit` applies
        it, ms: ``hit_correction_ms``, or less when the reload and correction together
        would fall below zero. ``frontend_ms + reload.total_ms + correction_ms +
        prefill.total_ms`` is :attr:`ttft_ms` (``sizing/data/performance.json``, ``fit``
        of each reload path)."""
        return max(0.0, self.reload.total_ms + self.reload.hit_correction_ms) - self.reload.total_ms


@dataclass(frozen=True)
class TierHit:
    """A returning user's TTFT from one tier, or why there is none.

    Attributes:
        tier: ``gpu``, ``cpu``, ``nvme`` or ``shared``.
        hit: the hit's time, or ``None`` without a measured basis.
        speedup: miss ÷ hit, or ``None``.
        no_basis: the English "no measured basis for …" sentence, else ``""``.
    """

    tier: str
    hit: HitTime | None
    speedup: float | None
    no_basis: str = ""

    @property
    def ttft_ms(self) -> float | None:
        """The hit's TTFT, ms, or ``None``."""
        return self.hit.ttft_ms if self.hit else None


@dataclass(frozen=True)
class ReturningUser:
    """TTFT of a returning user on one engine, miss and hits.

    Attributes:
        engine: the engine.
        gpu: the card's slug.
        tp: the instance's TP size.
        context_tokens: the prompt of the returning turn (history and new turn).
        new_tokens: the tokens of the new turn (prefilled on every hit).
        miss: the full prefill.
        frontend_ms: tokenizing the prompt (part of every TTFT).
        hits: one entry per tier asked for, in order.
    """

    engine: str
    gpu: str
    tp: int
    context_tokens: int
    new_tokens: int
    miss: PrefillTime
    frontend_ms: float
    hits: tuple[TierHit, ...]

    @property
    def miss_ms(self) -> float:
        """TTFT of a miss (tokenization and the full prefill), ms."""
        return self.frontend_ms + self.miss.total_ms

    def tier(self, tier: str) -> TierHit:
        """The entry for ``tier``.

        Raises:
            KeyError: when ``tier`` was not asked for.
        """
        for hit in self.hits:
            if hit.tier == tier:
                return hit
        raise KeyError(tier)


def ttft_miss_ms(
    shape: ModelShape, *, gpu: str, tp: int, prompt_tokens: int, tokenize: bool = True
) -> float:
    """TTFT of a miss: the prompt tokenized and prefilled whole, ms (errors as
    :func:`~sizing.performance.prefill.prefill`)."""
    p = prefill(shape, gpu=gpu, tp=tp, new_tokens=prompt_tokens)
    return frontend_ms(prompt_tokens, tokenize) + p.total_ms


def ttft_hit(
    shape: ModelShape,
    *,
    engine: str,
    tier: str,
    gpu: str,
    tp: int,
    prompt_tokens: int,
    cached_tokens: int,
    tokenize: bool = True,
) -> HitTime:
    """TTFT of a prompt whose first ``cached_tokens`` tokens come from ``tier``.

    Args:
        prompt_tokens: the whole prompt, ≥ 1.
        cached_tokens: its cached prefix, 0 to ``prompt_tokens − 1`` (an engine always
            computes at least the last token).
        engine, tier, gpu, tp: as :func:`~sizing.performance.reload.reload`.
        tokenize: whether the request carries text to tokenize (see the module).

    Raises:
        NoMeasuredBasis: for a GPU, engine or tier without a measurement.
        ValueError: for token counts out of range.
    """
    if not 0 <= cached_tokens < prompt_tokens:
        raise ValueError(
            f"cached_tokens must be 0 to prompt_tokens − 1 ({prompt_tokens - 1}), "
            f"got {cached_tokens}"
        )
    r = reload(shape, engine=engine, tier=tier, gpu=gpu, tp=tp, tokens=cached_tokens)
    p = prefill(
        shape, gpu=gpu, tp=tp, new_tokens=prompt_tokens - cached_tokens, cached_tokens=cached_tokens
    )
    fe = frontend_ms(prompt_tokens, tokenize)
    basis = p.basis.joined(r.basis).joined(frontend_basis(tokenize))
    ttft_ms = fe + p.total_ms + max(0.0, r.total_ms + r.hit_correction_ms)
    return HitTime(ttft_ms, r, p, fe, basis)


def ttft_hit_ms(
    shape: ModelShape,
    *,
    engine: str,
    tier: str,
    gpu: str,
    tp: int,
    prompt_tokens: int,
    cached_tokens: int,
    tokenize: bool = True,
) -> float:
    """:func:`ttft_hit` ``.ttft_ms`` (same arguments and errors)."""
    return ttft_hit(
        shape,
        engine=engine,
        tier=tier,
        gpu=gpu,
        tp=tp,
        prompt_tokens=prompt_tokens,
        cached_tokens=cached_tokens,
        tokenize=tokenize,
    ).ttft_ms


def returning_user(
    shape: ModelShape,
    *,
    engine: str,
    gpu: str,
    tp: int,
    context_tokens: int,
    new_tokens: int = NEW_TOKENS_PER_TURN,
    tiers: Iterable[str] = TIERS,
    tokenize: bool = True,
) -> ReturningUser:
    """A returning user's TTFT: a miss and a hit from each of ``tiers``.

    Args:
        shape: the model.
        engine: ``vllm``, ``lmcache``, ``sglang`` or ``dynamo``.
        gpu: catalog slug of the card.
        tp: the instance's TP size.
        context_tokens: the returning turn's prompt, ≥ 1.
        new_tokens: tokens the turn adds, at least 1 and at most ``context_tokens``
            (an engine always computes at least the last token).
        tiers: the tiers to evaluate.
        tokenize: whether requests carry text (the OpenAI-compatible servers do).

    A tier without a measurement for ``engine`` is returned with ``hit=None`` and its
    ``no_basis`` sentence; the miss needs a measured GPU class.

    Raises:
        NoMeasuredBasis: on field ``gpu`` when no measured class covers the card.
        ValueError: for token counts or a TP size out of range.
    """
    if context_tokens < 1:
        raise ValueError(f"context_tokens must be at least 1, got {context_tokens}")
    new = min(max(new_tokens, 1), context_tokens)
    cached = context_tokens - new
    miss = prefill(shape, gpu=gpu, tp=tp, new_tokens=context_tokens)
    fe = frontend_ms(context_tokens, tokenize)
    hits = []
    for tier in tiers:
        missing = missing_path(engine, tier)
        if missing:
            hits.append(TierHit(tier, None, None, missing))
            continue
        hit = ttft_hit(
            shape,
            engine=engine,
            tier=tier,
            gpu=gpu,
            tp=tp,
            prompt_tokens=context_tokens,
            cached_tokens=cached,
            tokenize=tokenize,
        )
        hits.append(TierHit(tier, hit, (fe + miss.total_ms) / hit.ttft_ms))
    return ReturningUser(engine, gpu, tp, context_tokens, new, miss, fe, tuple(hits))
