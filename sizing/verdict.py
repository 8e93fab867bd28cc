"""Does offloading pay off here, and if not, why.

Offloading pays when conversations rest between turns that the GPUs cannot hold and a
reload beats a recompute. It does not pay for single-turn traffic, for short prompts
whose prefill is cheaper than a reload, or when every conversation already fits in GPU
memory (seed document; DESIGN §3.5; NVIDIA's KVBM overview: offloading is "most
effective when the KV cache exceeds GPU memory and cache reuse outweighs the cost of
the transfer").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """The plan's answer to "should we sell an offload tier?".

    Attributes:
        offload_pays: True when a CPU tier should be sold.
        reasons: why, in plain sentences.
        warnings: constraints that bind or come close, each with what would fix it.
        binding: the names of the constraints that bind (:data:`BINDING`).
    """

    offload_pays: bool
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    binding: tuple[str, ...] = ()


BINDING = {
    "active": "GPU capacity for active users",
    "mirror": "CPU tier not larger than the GPU cache",
    "nvme": "NVMe endurance",
}
"""Names of the constraints a plan can run into without being infeasible."""


def decide(
    *,
    users: int,
    conversations_on_gpus: int,
    reload_ms: float,
    recompute_ms: float,
    tier_exceeds_gpu_cache: bool,
    nvme_lifetime_years: float | None,
    active_users: int | None = None,
) -> Verdict:
    """Decide whether the offload tier pays off.

    Args:
        users: conversations to keep warm.
        conversations_on_gpus: full-length conversations the GPUs hold.
        reload_ms: time to reload one conversation from CPU memory, ms.
        recompute_ms: time to prefill it again, ms.
        tier_exceeds_gpu_cache: whether each instance's tier is larger than its GPU cache.
        nvme_lifetime_years: years until the NVMe drives wear out, or ``None``.
        active_users: users active at the same moment (``None``: not given, no check); their
            conversations must be resident on the GPUs, since a conversation is
            reloaded to the GPU before it is served (seed: resting conversations wait
            in the CPU tier between turns, not while they run).
    """
    reasons: list[str] = []
    warnings: list[str] = []
    binding: list[str] = []
    resting = max(0, users - conversations_on_gpus)
    pays = True
    if resting == 0:
        pays = False
        reasons.append(
            f"All {users:,} conversations fit in GPU memory "
            f"({conversations_on_gpus:,} resident): a CPU tier would only "
            "mirror what the GPUs already hold."
        )
    else:
        reasons.append(
            f"{resting:,} of {users:,} conversations do not fit on the GPUs and "
            "rest between turns; without a tier each returning user pays a "
            "full prefill again."
        )
    if reload_ms >= recompute_ms:
        pays = False
        reasons.append(
            f"A reload ({reload_ms:.0f} ms) is not faster than recomputing the "
            f"prefill ({recompute_ms:.0f} ms): prompts this short are cheap to "
            "recompute."
        )
    elif resting:
        reasons.append(
            f"A reload takes about {reload_ms:.0f} ms against about "
            f"{recompute_ms:.0f} ms to recompute the prefill."
        )
    active = active_users
    if active is not None and active > conversations_on_gpus:
        binding.append(BINDING["active"])
        warnings.append(
            f"{active:,} users are active at once but the GPUs hold "
            f"{conversations_on_gpus:,} full-length conversations: the GPU capacity for "
            "active users binds, and the others wait for a free slot. More GPUs, an FP8 "
            "KV cache or a shorter context would fix it."
        )
    if pays and not tier_exceeds_gpu_cache:
        binding.append(BINDING["mirror"])
        warnings.append(
            "The CPU tier per instance is not larger than the instance's GPU "
            "cache: it only mirrors the GPU and adds no hits. More users per "
            "instance or fewer GPUs per instance would fix it."
        )
    if nvme_lifetime_years is not None and nvme_lifetime_years < 5:
        binding.append(BINDING["nvme"])
        warnings.append(
            f"The NVMe drives reach their rated endurance in about "
            f"{nvme_lifetime_years * 12:.0f} months at this write volume: "
            "choose mixed-use (3 DWPD) drives or more capacity."
        )
    return Verdict(pays, tuple(reasons), tuple(warnings), tuple(binding))
