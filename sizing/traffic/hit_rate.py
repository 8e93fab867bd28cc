"""Hit rates of returning users per tier, from the tiers' capacities, the write rate and
the gaps between turns, under LRU eviction.

Model (the "window" or characteristic-time model of an LRU cache). A returning
conversation still finds its KV in a tier of capacity ``C`` when less than ``C`` of other
KV has been touched since its last turn. If KV is touched at ``r`` tokens per second, that
is when its gap is shorter than the tier's window ``T = C / r``, so

    h(C) = h_max × P(gap < C / r)

(docs/sizing.md §10; the fit of ``benefit-lru-sim-mooncake-traces`` in
``offload_benefit_points.jsonl``). Taking ``r`` as the rate of *new* KV over-predicts at
small tiers (by 1.2-2× on the Mooncake traces at ≤ 3M tokens, exact at 30M), because a
turn touches its whole conversation, not only the tokens it adds: every conversation
that comes back within the window moves ahead of the waiting one. Che's approximation
(Che, Tung, Wang 2002, "Hierarchical Web caching systems", IEEE JSAC 20(7); for renewal
traffic Fricker, Robert, Roberts 2012, ITC 24) counts exactly that: the window ``T`` solves

    B(T) = C,   B(T) = λ × ( Σ_{k<K} s_k × E[min(gap, T)] + s_K × T )

where ``λ`` is the rate at which conversations start, ``K`` their turns and ``s_k`` the
tokens a tier holds for a conversation after its turn ``k``: the bytes whose last touch
lies within ``T``. ``B`` grows at ``λ × Σ s_k`` for short windows (every touch counts)
and at the new-KV rate ``λ × s_K`` for long ones (the plain window model). A return
then hits when ``gap < T``; the tests compare this with a discrete-event simulation of
the same workload.

Tiers (GPU prefix cache, CPU, NVMe, shared) are inclusive, as vLLM's offloading
connector and LMCache store every new block to each tier (seed: "a smaller CPU tier
only mirrors what the GPU holds"), so a tier's window is at least the one before it, and
a return is counted in the fastest tier whose window covers its gap. The shared tier is
filled by every instance that writes to it, so its stream is theirs summed.

What a tier stores per conversation follows vLLM's default ``offload_prompt_only``
(engine_flags.md; seed): the prompt of turn ``k``, ``k × p + (k − 1) × o`` tokens for
``p`` new prompt and ``o`` output tokens per turn; the last answer is recomputed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from sizing.traffic.return_gaps import GapDistribution

MAX_TURNS = 1000
"""Most turns per conversation accepted."""


@dataclass(frozen=True)
class ConversationShape:
    """The tokens of one conversation, turn by turn (without a shared system prompt).

    Attributes:
        turns: turns per conversation, 1 to :data:`MAX_TURNS`.
        new_prompt_tokens: tokens the user (or a tool) adds per turn, ≥ 1.
        output_tokens: tokens the model answers per turn, ≥ 0.

    Raises:
        ValueError: naming the attribute that is out of range.
    """

    turns: int
    new_prompt_tokens: int
    output_tokens: int

    def __post_init__(self) -> None:
        if not 1 <= self.turns <= MAX_TURNS:
            raise ValueError(f"turns must be between 1 and {MAX_TURNS}, got {self.turns}")
        if self.new_prompt_tokens < 1:
            raise ValueError(f"new_prompt_tokens must be ≥ 1, got {self.new_prompt_tokens}")
        if self.output_tokens < 0:
            raise ValueError(f"output_tokens must be ≥ 0, got {self.output_tokens}")

    def prompt_tokens(self, turn: int) -> int:
        """Prompt of turn ``turn`` (1-based): ``turn × p + (turn − 1) × o`` tokens; also
        what a tier holds for the conversation after that turn."""
        return turn * self.new_prompt_tokens + (turn - 1) * self.output_tokens

    @property
    def final_tokens(self) -> int:
        """The whole conversation after its last answer, tokens."""
        return self.turns * (self.new_prompt_tokens + self.output_tokens)

    @cached_property
    def stored_tokens(self) -> int:
        """What a tier holds for the conversation after its last turn (the prompt of
        that turn), tokens."""
        return self.prompt_tokens(self.turns)

    @cached_property
    def prompt_tokens_total(self) -> int:
        """Prompt tokens of all turns together (what prefills would cost without any hit)."""
        k = self.turns
        return k * (k + 1) // 2 * self.new_prompt_tokens + k * (k - 1) // 2 * self.output_tokens

    @cached_property
    def cacheable_tokens_total(self) -> int:
        """Prompt tokens of all returns that a hit serves from a tier (turn k+1 reuses the
        prompt of turn k)."""
        k = self.turns
        return (
            k * (k - 1) // 2 * self.new_prompt_tokens + (k - 1) * (k - 2) // 2 * self.output_tokens
        )

    @cached_property
    def max_token_hit_rate(self) -> float:
        """Share of prompt tokens a tier can serve when every return hits (h_max)."""
        return self.cacheable_tokens_total / self.prompt_tokens_total


@dataclass(frozen=True)
class ReferenceStream:
    """The conversations one tier sees.

    Attributes:
        conversations_per_s: rate at which new conversations start, per s (≥ 0).
        shape: their tokens per turn.
        gaps: the distribution of gaps between their turns.
    """

    conversations_per_s: float
    shape: ConversationShape
    gaps: GapDistribution

    @property
    def turns_per_s(self) -> float:
        """Requests per second (every turn is one request)."""
        return self.conversations_per_s * self.shape.turns

    @property
    def new_tokens_per_s(self) -> float:
        """Rate at which new KV is written, tokens per s (λ × s_K)."""
        return self.conversations_per_s * self.shape.stored_tokens

    def scaled(self, instances: int) -> ReferenceStream:
        """The stream of ``instances`` such streams together (a shared tier's)."""
        return ReferenceStream(self.conversations_per_s * instances, self.shape, self.gaps)


def touched_tokens(stream: ReferenceStream, window_s: float) -> float:
    """``B(T)``: tokens whose last touch lies within the last ``window_s`` seconds.

    Source: Che's approximation (module docstring).
    """
    if window_s <= 0:
        return 0.0
    shape = stream.shape
    returning = shape.cacheable_tokens_total
    last = shape.stored_tokens
    return stream.conversations_per_s * (
        returning * stream.gaps.mean_truncated_s(window_s) + last * window_s
    )


def window_s(stream: ReferenceStream, capacity_tokens: float) -> float:
    """The tier's window ``T``: the gap up to which a return still hits, s.

    Solves ``B(T) = capacity_tokens`` (``B`` rises strictly with ``T``). ``inf`` when
    nothing is written (no conversations); 0 for a tier without capacity.

    Raises:
        ValueError: if the capacity is negative or not finite.
    """
    return _window(stream, capacity_tokens)[0]


def _window(stream: ReferenceStream, capacity_tokens: float) -> tuple[float, float | None]:
    """:func:`window_s` and ``P(gap < T)`` as its last step computed it (``None``: not
    computed at the ``T`` it returns); errors as :func:`window_s`."""
    if not math.isfinite(capacity_tokens) or capacity_tokens < 0:
        raise ValueError(f"capacity_tokens must be a finite number ≥ 0, got {capacity_tokens}")
    if capacity_tokens == 0:
        return 0.0, None
    shape, gaps, rate = stream.shape, stream.gaps, stream.conversations_per_s
    final = shape.stored_tokens
    last = rate * final  # the stream's new_tokens_per_s
    if last <= 0:
        return math.inf, None
    history = shape.cacheable_tokens_total
    returning = rate * history
    lo, hi = 0.0, capacity_tokens / last  # B(T) ≥ λ s_K T, so T ≤ hi
    t = hi
    # B(T) and B'(T) as touched_tokens and the CDF give them, inlined (one z per step).
    mu, sigma, mean_s = gaps.mu, gaps.sigma, gaps.mean_s
    log, erfc, root2, inf = math.log, math.erfc, math.sqrt(2.0), math.inf
    tolerance = 1e-9 * capacity_tokens
    for _ in range(100):  # Newton on B(T) − C, kept inside the bracket [lo, hi]
        if t <= 0 or t == inf:  # outside the closed forms: the functions themselves
            touched = touched_tokens(stream, t)
            below = gaps.cdf(t)
        else:
            z = (log(t) - mu) / sigma
            below = 0.5 * erfc(-z / root2)  # P(gap < t)
            truncated = mean_s * (0.5 * erfc(-(z - sigma) / root2)) + t * (1.0 - below)
            touched = rate * (history * truncated + final * t)
        excess = touched - capacity_tokens
        if abs(excess) <= tolerance:
            return t, below
        if excess > 0:
            hi = t
        else:
            lo = t
        slope = returning * (1.0 - below) + last  # B'(T)
        t = t - excess / slope
        if not lo < t < hi:
            t = (lo + hi) / 2
    return t, None


@dataclass(frozen=True)
class TierHits:
    """Where returning conversations find their KV: shares of returns, summing with
    :attr:`miss` to 1.

    Attributes:
        gpu: still in the GPU prefix cache.
        cpu: in the CPU tier (not on the GPU).
        nvme: in the local NVMe tier (neither GPU nor CPU).
        shared: in the shared NFS/S3 tier only.
        windows_s: each tier's window (gpu, cpu, nvme, shared), s; a gap shorter than a
            tier's window hits there or faster.
        max_token_hit_rate: share of prompt tokens that are a return's history.
    """

    gpu: float
    cpu: float
    nvme: float
    shared: float
    windows_s: tuple[float, float, float, float]
    max_token_hit_rate: float

    @property
    def miss(self) -> float:
        """Returns that find their KV nowhere and are prefilled again."""
        return max(0.0, 1.0 - self.gpu - self.cpu - self.nvme - self.shared)

    @property
    def any_tier(self) -> float:
        """Returns that hit somewhere (GPU included)."""
        return 1.0 - self.miss

    @property
    def offload_tiers(self) -> float:
        """Returns that hit a tier beside the GPU (what offloading adds)."""
        return self.cpu + self.nvme + self.shared

    @property
    def token_hit_rate(self) -> float:
        """Share of all prompt tokens served from a cache (GPU included)."""
        return self.any_tier * self.max_token_hit_rate


def window_and_share(stream: ReferenceStream, capacity_tokens: float) -> tuple[float, float]:
    """:func:`window_s` of a tier of ``capacity_tokens`` and the share of gaps shorter
    than it, ``P(gap < T)`` (errors as :func:`window_s`)."""
    window, below = _window(stream, capacity_tokens)
    # The solver's last step took the share at the window it returns, as cdf does.
    return window, stream.gaps.cdf(window) if below is None else below


def hit_rates(
    stream: ReferenceStream,
    *,
    gpu_tokens: float,
    cpu_tokens: float = 0.0,
    nvme_tokens: float = 0.0,
    shared_tokens: float = 0.0,
    shared_instances: int = 1,
    window: Callable[[ReferenceStream, float], tuple[float, float]] = window_and_share,
) -> TierHits:
    """Share of returns that hit each tier.

    Args:
        stream: the conversations one engine instance serves (a KV-aware router keeps a
            conversation on its instance).
        gpu_tokens: the instance's GPU prefix cache free for resting conversations, tokens.
        cpu_tokens: the instance's CPU tier, tokens (0: none).
        nvme_tokens: the instance's NVMe tier, tokens (0: none).
        shared_tokens: the shared tier, all instances together, tokens (0: none).
        shared_instances: instances writing to the shared tier (≥ 1).
        window: :func:`window_and_share`, or a caller's store of its results (a search
            asks for the same stream and capacity many times).

    Raises:
        ValueError: if a capacity is negative or ``shared_instances`` < 1.

    Source: module docstring (Che's approximation, inclusive tiers).
    """
    if shared_instances < 1:
        raise ValueError(f"shared_instances must be ≥ 1, got {shared_instances}")
    # A tier without capacity has a window of 0 (window_s), which leaves the one before.
    gpu = window(stream, gpu_tokens)
    cpu = window(stream, cpu_tokens) if cpu_tokens else None
    nvme = window(stream, nvme_tokens) if nvme_tokens else None
    shared = window(stream.scaled(shared_instances), shared_tokens) if shared_tokens else None
    return tier_hits(gpu, (cpu, nvme, shared), stream.shape.max_token_hit_rate)


Window = tuple[float, float]
"""A tier's window, s, and the share of gaps shorter than it (:func:`window_and_share`)."""


def tier_hits(
    gpu: Window,
    beyond: tuple[Window | None, Window | None, Window | None],
    max_token_hit_rate: float,
) -> TierHits:
    """The hits of :func:`hit_rates` from each tier's window and share: the GPU prefix
    cache's and, beyond it, the CPU, NVMe and shared tiers' (``None``: no such tier).

    Tiers are inclusive: a window no longer than the one before adds no hit (module
    docstring)."""
    t_gpu, p_gpu = gpu
    cpu, nvme, shared = beyond
    t_cpu, p_cpu = cpu if cpu is not None and cpu[0] > t_gpu else gpu
    t_nvme, p_nvme = nvme if nvme is not None and nvme[0] > t_cpu else (t_cpu, p_cpu)
    t_shared, p_shared = shared if shared is not None and shared[0] > t_nvme else (t_nvme, p_nvme)
    return TierHits(
        gpu=p_gpu,
        cpu=p_cpu - p_gpu,
        nvme=p_nvme - p_cpu,
        shared=p_shared - p_nvme,
        windows_s=(t_gpu, t_cpu, t_nvme, t_shared),
        max_token_hit_rate=max_token_hit_rate,
    )


def tier_tokens_for_hit_rate(stream: ReferenceStream, target: float) -> float:
    """Capacity (tokens) a tier needs so that a share ``target`` of returns hit it or faster.

    The inverse of :func:`hit_rates` for one tier: ``B(quantile(target))``.

    Raises:
        ValueError: if ``target`` is not strictly between 0 and 1.
    """
    return touched_tokens(stream, stream.gaps.quantile(target))
