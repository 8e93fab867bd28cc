"""The traffic a customer's users make: turns, gaps, tokens per turn, the busy hour, targets.

Every input has a default a customer can leave alone; each default is stated as an
assumption on the page and in the summary (:mod:`sizing.traffic.assumptions`):

- **Turns per conversation** 8: a planning assumption that lets the seed's conversation
  of up to 8K tokens grow 1K tokens a turn.
- **Time between turns**: the ``chat`` profile of :mod:`sizing.traffic.return_gaps` (Mooncake
  conversation trace: median 123 s, p90 483 s), or a named profile, or a median and p90.
- **Output tokens per turn** 343: the Mooncake conversation trace's average output
  (FAST'25 paper, Table 2), at most half of a turn's tokens.
- **New prompt tokens per turn**: the rest of the conversation's context spread evenly
  over its turns: ``(context − shared prompt) ÷ turns − output``.
- **Active share in the busiest hour** 1.0: every user holds a conversation in that
  hour (the seed keeps every user warm); in it, a user sends a turn on average every
  mean gap, so the hour's requests are ``active users ÷ mean gap`` per second.
- **Targets**: TTFT p95 2,000 ms and TPOT 200 ms, the latency bounds of MLPerf
  Inference's Llama 2 70B server scenario (mlcommons/inference ``loadgen/mlperf.conf``:
  ``ttft_latency = 2000``, ``tpot_latency = 200``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sizing.errors import SizingError, gettext_noop
from sizing.inputs import MAX_TOKENS, declared_inputs, input_field, quoted
from sizing.traffic.hit_rate import MAX_TURNS, ConversationShape, ReferenceStream
from sizing.traffic.return_gaps import DEFAULT_PROFILE, MAX_GAP_S, PROFILES, GapDistribution

DEFAULT_TURNS = 8
DEFAULT_OUTPUT_TOKENS = 343
DEFAULT_BUSY_HOUR_SHARE = 1.0
DEFAULT_TTFT_P95_MS = 2000.0
DEFAULT_TPOT_MS = 200.0
MAX_TARGET_MS = 600_000.0
"""Longest target accepted, ms (ten minutes)."""


@dataclass(frozen=True)
class Traffic:
    """How the users use the model (``None``: the default, see the module docstring).

    The one declaration of the traffic inputs: :class:`sizing.workload.Workload` takes
    these fields, their defaults and limits (``metadata``, :mod:`sizing.inputs`) as its
    own.

    Attributes:
        turns: turns per conversation, 1 to 1,000.
        gap_profile: ``chat``, ``agent`` or ``document_qa``
        (:data:`~sizing.traffic.return_gaps.PROFILES`).
        gap_median_s, gap_p90_s: the customer's own gaps, s; both or neither; they
            override the profile.
        new_prompt_tokens: tokens a user adds per turn.
        output_tokens: tokens the model answers per turn.
        busy_hour_active_share: share of users with a conversation in the busiest hour,
            above 0 and at most 1.
        ttft_p95_ms: target time to first token at the 95th percentile, ms.
        tpot_ms: target time per output token, ms.
    """

    turns: int = input_field(
        DEFAULT_TURNS,
        label=gettext_noop("the number of turns per conversation"),
        help="turns per conversation",
        min=1,
        max=MAX_TURNS,
    )
    gap_profile: str = input_field(
        DEFAULT_PROFILE,
        label=gettext_noop("the time between turns"),
        help="named profile of the time between turns",
        choices=tuple(PROFILES),
    )
    gap_median_s: float | None = input_field(
        None,
        label=gettext_noop("the median time between turns (s)"),
        help="median time between turns, s (with the p90; overrides the profile)",
        exclusive_min=0,
        max=MAX_GAP_S,
    )
    gap_p90_s: float | None = input_field(
        None,
        label=gettext_noop("the p90 time between turns (s)"),
        help="90th percentile time between turns, s",
        exclusive_min=0,
        max=MAX_GAP_S,
    )
    new_prompt_tokens: int | None = input_field(
        None,
        label=gettext_noop("the number of new prompt tokens per turn"),
        help="tokens a user adds per turn (not given: the context spread over the turns)",
        min=1,
        max=MAX_TOKENS,
    )
    output_tokens: int | None = input_field(
        None,
        label=gettext_noop("the number of output tokens per turn"),
        help="tokens the model answers per turn (not given: 343, at most half a turn)",
        min=0,
        max=MAX_TOKENS,
    )
    busy_hour_active_share: float = input_field(
        DEFAULT_BUSY_HOUR_SHARE,
        label=gettext_noop("the share of users active in the busiest hour"),
        help="share of users active in the busiest hour, above 0 and at most 1",
        exclusive_min=0,
        max=1,
    )
    ttft_p95_ms: float = input_field(
        DEFAULT_TTFT_P95_MS,
        label=gettext_noop("the TTFT p95 target (ms)"),
        help="TTFT p95 target, ms",
        exclusive_min=0,
        max=MAX_TARGET_MS,
    )
    tpot_ms: float = input_field(
        DEFAULT_TPOT_MS,
        label=gettext_noop("the TPOT target (ms)"),
        help="TPOT target, ms",
        exclusive_min=0,
        max=MAX_TARGET_MS,
    )


FIELDS = tuple(f.name for f in dataclasses.fields(Traffic))
"""The inputs of :class:`Traffic`, by name."""

INPUTS = declared_inputs(Traffic)
"""The inputs of :class:`Traffic` as declared, by name (:class:`sizing.inputs.Input`)."""


PER_TURN_RANGE = {
    "output_tokens": gettext_noop(
        "output tokens per turn must be a whole number of at least %(min)s; with %(turns)s "
        "turns in a context of %(context)s tokens it would be %(got)s"
    ),
    "new_prompt_tokens": gettext_noop(
        "new prompt tokens per turn must be a whole number of at least %(min)s; with "
        "%(turns)s turns in a context of %(context)s tokens it would be %(got)s"
    ),
}
"""The error of a per-turn token count out of range, by its field."""


def gaps(traffic: Traffic) -> GapDistribution:
    """The gap distribution the traffic names.

    Raises:
        SizingError: on ``gap_profile``, ``gap_median_s`` or ``gap_p90_s``.
    """
    median, p90 = traffic.gap_median_s, traffic.gap_p90_s
    if median is None and p90 is None:
        INPUTS["gap_profile"].check(traffic.gap_profile)
        return PROFILES[traffic.gap_profile]
    if p90 is None:
        raise SizingError(
            "gap_p90_s",
            template=gettext_noop(
                "the p90 time between turns is missing: give both the median and the p90"
            ),
            code="gap_p90_missing",
        )
    if median is None:
        raise SizingError(
            "gap_median_s",
            template=gettext_noop(
                "the median time between turns is missing: give both the median and the p90"
            ),
            code="gap_median_missing",
        )
    INPUTS["gap_median_s"].check(median)
    INPUTS["gap_p90_s"].check(p90)
    if p90 <= median:
        raise SizingError(
            "gap_p90_s",
            template=gettext_noop(
                "the p90 time between turns (%(p90)s s) must be longer than the median "
                "(%(median)s s)"
            ),
            code="gap_p90_not_above_median",
            values={"p90": p90, "median": median},
        )
    return GapDistribution(float(median), float(p90))


def conversation_shape(traffic: Traffic, unique_context_tokens: int) -> ConversationShape:
    """Tokens per turn, with the defaults derived from the context.

    Args:
        traffic: the inputs.
        unique_context_tokens: the context without the shared system prompt, tokens.

    Raises:
        SizingError: on ``turns``, ``new_prompt_tokens`` or ``output_tokens`` when out of
            range; on ``output_tokens`` when the output tokens given leave a turn no
            prompt; when the conversation would outgrow the context, on the per-turn
            tokens the customer gave (the larger of the two) with the default turns, else
            on ``turns``; on
            ``context_tokens`` when a per-turn default derived from the context alone is
            too small (the context is the input the customer gave).
    """
    turns = traffic.turns
    INPUTS["turns"].check(turns)
    per_turn = unique_context_tokens // turns
    output = traffic.output_tokens
    if output is None:
        output = min(DEFAULT_OUTPUT_TOKENS, per_turn // 2)
    prompt = traffic.new_prompt_tokens
    derived = {"output_tokens": traffic.output_tokens is None, "new_prompt_tokens": prompt is None}
    if prompt is None:
        prompt = per_turn - output
    if (
        isinstance(output, int)
        and isinstance(prompt, int)
        and prompt < 1
        and derived["new_prompt_tokens"]
        and not derived["output_tokens"]
    ):
        # the prompt is what a turn leaves beside the output tokens the customer gave
        raise SizingError(
            "output_tokens",
            template=gettext_noop(
                "%(output)s output tokens per turn leave no room for a prompt: %(turns)s turns "
                "in a context of %(context)s tokens give each turn %(per_turn)s tokens"
            ),
            code="output_fills_turn",
            values={
                "output": output,
                "turns": turns,
                "context": unique_context_tokens,
                "per_turn": per_turn,
            },
        )
    for field, value, low in (("output_tokens", output, 0), ("new_prompt_tokens", prompt, 1)):
        if not isinstance(value, int) or value < low:
            raise SizingError(
                # a default derived from the context: the context is the input to change
                "context_tokens" if derived[field] else field,
                template=PER_TURN_RANGE[field],
                code="tokens_per_turn_range",
                values={
                    "min": low,
                    "turns": turns,
                    "context": unique_context_tokens,
                    "got": quoted(value),
                },
            )
    shape = ConversationShape(turns, prompt, output)
    if shape.final_tokens > unique_context_tokens:
        given = [f for f in ("new_prompt_tokens", "output_tokens") if not derived[f]]
        raise SizingError(
            # with the default turns, the per-turn tokens the customer gave (the larger
            # of two); else the turns
            max(given, key=lambda f: output if f == "output_tokens" else prompt)
            if given and turns == DEFAULT_TURNS
            else "turns",
            template=gettext_noop(
                "%(turns)s turns of %(prompt)s prompt and %(output)s output tokens make "
                "%(tokens)s tokens, more than the context of %(context)s tokens: fewer turns, "
                "fewer tokens per turn or a longer context would fix it"
            ),
            code="conversation_exceeds_context",
            values={
                "turns": turns,
                "prompt": prompt,
                "output": output,
                "tokens": shape.final_tokens,
                "context": unique_context_tokens,
            },
        )
    return shape


def validate_targets(traffic: Traffic) -> None:
    """Check the share and the targets.

    Raises:
        SizingError: on ``busy_hour_active_share``, ``ttft_p95_ms`` or ``tpot_ms``.
    """
    for name in ("busy_hour_active_share", "ttft_p95_ms", "tpot_ms"):
        INPUTS[name].check(getattr(traffic, name))


def busy_hour_stream(
    traffic: Traffic, *, users: int, shape: ConversationShape, gap: GapDistribution
) -> ReferenceStream:
    """All conversations of the busiest hour as one stream: ``users × share`` users, each
    sending a turn every mean gap, so conversations start at ``active ÷ (turns × mean
    gap)`` per second (module docstring)."""
    active = users * traffic.busy_hour_active_share
    return ReferenceStream(active / (shape.turns * gap.mean_s), shape, gap)
