"""The traffic defaults a plan relied on, stated as assumptions on the page and in the
summary: each as a code with its figures (:class:`Assumption`) and its English sentence.
The defaults and their sources are in :mod:`sizing.traffic.profile`'s docstring; a default target
one request cannot meet is replaced by the one the plan was sized for
(:mod:`sizing.serving.targets`), and the ``targets`` sentence names both.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sizing.traffic.hit_rate import ConversationShape
from sizing.traffic.profile import (
    DEFAULT_BUSY_HOUR_SHARE,
    DEFAULT_TPOT_MS,
    DEFAULT_TTFT_P95_MS,
    DEFAULT_TURNS,
    Traffic,
)
from sizing.traffic.return_gaps import GapDistribution

ASSUMPTION_TEXTS = {
    "turns": "{turns} turns per conversation",
    "gap_profile": "time between turns of the {profile} profile: median {median_s:g} s, "
    "p90 {p90_s:g} s ({source})",
    "tokens_per_turn": "{prompt:,} new prompt and {output:,} output tokens per turn",
    "busy_hour": "every user is active in the busiest hour",
    "targets": "targets {ttft} and {tpot} (MLPerf Inference server scenario)",
}
"""The English sentence of each :class:`Assumption` code (module docstring: the defaults
and their sources)."""

TARGET_TEXTS = {
    "met": "{target} {default_ms:,.0f} ms",
    "relaxed": "{target} {default_ms:,.0f} ms (not reachable at this context: sized for "
    "{sized_ms:,.0f} ms)",
}
"""The English wording of one default target in the ``targets`` sentence: the default
alone, or beside the target the plan was sized for when one request takes longer than
the default (:mod:`sizing.serving.targets`)."""


def _target_text(target: str, default_ms: float, sized_ms: float) -> str:
    key = "met" if sized_ms == default_ms else "relaxed"
    return TARGET_TEXTS[key].format(target=target, default_ms=default_ms, sized_ms=sized_ms)


@dataclass(frozen=True)
class Assumption:
    """One traffic default the plan relied on, as a code with its figures, so that a page
    can word it in the reader's language; :attr:`text` is the English sentence.

    Attributes:
        code: a key of :data:`ASSUMPTION_TEXTS`.
        values: the figures the sentence quotes, by name.
    """

    code: str
    values: tuple[tuple[str, int | float | str], ...] = ()

    @property
    def text(self) -> str:
        """The English sentence."""
        values = dict(self.values)
        if self.code == "targets":
            values = {
                "ttft": _target_text("TTFT p95", *_floats(values, "ttft")),
                "tpot": _target_text("TPOT", *_floats(values, "tpot")),
            }
        return ASSUMPTION_TEXTS[self.code].format(**values)


def _floats(values: dict[str, int | float | str], name: str) -> tuple[float, float]:
    return float(values[f"{name}_ms"]), float(values[f"{name}_sized_ms"])


def assumption_notes(
    traffic: Traffic,
    shape: ConversationShape,
    gap: GapDistribution,
    *,
    sized_ms: tuple[float, float] | None = None,
) -> tuple[Assumption, ...]:
    """The defaults this traffic relied on (empty when the customer set every input).

    Codes: ``turns``, ``gap_profile`` (``profile`` is a key of
    :data:`~sizing.traffic.return_gaps.PROFILES`), ``tokens_per_turn``, ``busy_hour`` and
    ``targets`` (both targets at their defaults: ``ttft_ms``, ``tpot_ms``, and
    ``ttft_sized_ms``, ``tpot_sized_ms``, the TTFT p95 and TPOT targets in ms the plan was
    sized for, ``sized_ms``; above a default when one request takes longer than it,
    :mod:`sizing.serving.targets`; ``None``: the defaults).
    """
    out = []
    if traffic.turns == DEFAULT_TURNS:
        out.append(Assumption("turns", (("turns", DEFAULT_TURNS),)))
    if traffic.gap_median_s is None:
        out.append(
            Assumption(
                "gap_profile",
                (
                    ("profile", gap.name),
                    ("median_s", gap.median_s),
                    ("p90_s", gap.p90_s),
                    ("source", gap.source),
                ),
            )
        )
    if traffic.new_prompt_tokens is None or traffic.output_tokens is None:
        out.append(
            Assumption(
                "tokens_per_turn",
                (("prompt", shape.new_prompt_tokens), ("output", shape.output_tokens)),
            )
        )
    if traffic.busy_hour_active_share == DEFAULT_BUSY_HOUR_SHARE:
        out.append(Assumption("busy_hour"))
    if traffic.ttft_p95_ms == DEFAULT_TTFT_P95_MS and traffic.tpot_ms == DEFAULT_TPOT_MS:
        ttft_sized, tpot_sized = sized_ms or (DEFAULT_TTFT_P95_MS, DEFAULT_TPOT_MS)
        out.append(
            Assumption(
                "targets",
                (
                    ("ttft_ms", DEFAULT_TTFT_P95_MS),
                    ("tpot_ms", DEFAULT_TPOT_MS),
                    ("ttft_sized_ms", ttft_sized),
                    ("tpot_sized_ms", tpot_sized),
                ),
            )
        )
    return tuple(out)


def stated(
    traffic: Traffic, shape: ConversationShape, gap: GapDistribution, sized_ms: tuple[float, float]
) -> tuple[tuple[Assumption, ...], tuple[str, ...]]:
    """:func:`assumption_notes` and their English sentences, kept per inputs: they do not
    depend on the users, so the plans of a customer changing only those share them. The
    key names the type of every figure a note quotes (2000 and 2000.0 are equal keys but
    read differently)."""
    figures = (*sized_ms, gap.median_s, gap.p90_s, shape.new_prompt_tokens, shape.output_tokens)
    return _stated(traffic, shape, gap, sized_ms, tuple(map(type, figures)))


@lru_cache(maxsize=256)
def _stated(
    traffic: Traffic,
    shape: ConversationShape,
    gap: GapDistribution,
    sized_ms: tuple[float, float],
    _types: tuple[type, ...],
) -> tuple[tuple[Assumption, ...], tuple[str, ...]]:
    notes = assumption_notes(traffic, shape, gap, sized_ms=sized_ms)
    return notes, tuple(note.text for note in notes)
