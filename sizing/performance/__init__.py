"""The performance model: prefill, decode, reload per engine and tier, and TTFT.

Build a :class:`ModelShape` once per model with :func:`model_shape`, then call the
functions below as often as needed (each evaluation is microseconds, no I/O). Every
result carries the :class:`Basis` (measurement ids) it rests on, and for a card estimated
from its architecture family's measurement the band; a GPU outside every family, an
engine or a tier without a measurement raises :class:`NoMeasuredBasis` ("no measured
basis for …").

Modules: :mod:`.shape` (work per token), :mod:`.prefill`, :mod:`.decode`,
:mod:`.reload`, :mod:`.ttft`, :mod:`.links` (HBM reads, all-reduces),
:mod:`.calibration` (the measured constants, ``sizing/data/performance.json``).
"""

from sizing.performance.calibration import ENGINES, TIERS, Basis, NoMeasuredBasis
from sizing.performance.decode import DecodeStep, decode, decode_tokens_per_s_per_gpu, tpot_ms
from sizing.performance.prefill import PrefillTime, prefill, prefill_ms
from sizing.performance.reload import ReloadTime, reload, reload_ms
from sizing.performance.shape import ModelShape, model_shape
from sizing.performance.ttft import (
    NEW_TOKENS_PER_TURN,
    HitTime,
    ReturningUser,
    TierHit,
    returning_user,
    ttft_hit,
    ttft_hit_ms,
    ttft_miss_ms,
)

__all__ = [
    "ENGINES",
    "NEW_TOKENS_PER_TURN",
    "TIERS",
    "Basis",
    "DecodeStep",
    "HitTime",
    "ModelShape",
    "NoMeasuredBasis",
    "PrefillTime",
    "ReloadTime",
    "ReturningUser",
    "TierHit",
    "decode",
    "decode_tokens_per_s_per_gpu",
    "model_shape",
    "prefill",
    "prefill_ms",
    "reload",
    "reload_ms",
    "returning_user",
    "tpot_ms",
    "ttft_hit",
    "ttft_hit_ms",
    "ttft_miss_ms",
]
