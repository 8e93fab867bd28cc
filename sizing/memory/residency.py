"""Where the users' conversations rest: on the GPUs, in the CPU-memory tier, on NVMe.

One count per place, computed here only, so the estimate's chart, the quote PDF's tier
chart, the e-mail and the JSON summary read the same numbers. Rules (sizing article;
docs/sizing.md §4 and §5):

- Each user keeps one conversation. The GPUs hold as many as fit
  (``Parallelism.conversations_on_gpus``), never more than there are users.
- The others rest between turns: in the CPU-memory tier when one is sold
  (``sizing.memory.host_memory.cpu_tier`` keeps every user's conversation warm), else they are
  recomputed when their user returns. A tier cut by a host-memory limit or by the
  node's DIMM slots (``sizing.plan.orchestrator``) keeps only the conversations its bytes hold, as
  the serving engine stores them (``CpuTier.conversations_per_instance`` × instances,
  :mod:`sizing.memory.rank_bytes`); the rest rest in the shared tier when the plan sells one
  (it holds every user once, ``sizing.serving.serve``), else they are recomputed. Before
  either, the NVMe tier keeps what its bytes hold of them: it is inclusive and LRU
  (every block offloaded is written through to it, LMCache's and vLLM's tiered
  offloading), so it holds the most recent conversations, those on the GPUs and in the
  CPU tier first, then the next ones (the NVMe capacity the hit rates of
  ``sizing.traffic.hit_rate`` count).
- The NVMe tier holds one day of new conversations (``sizing.memory.nvme``); those beyond the
  users kept warm are the day's earlier conversations, which only the NVMe tier holds.
  A tier capped by the chassis's bays holds the most recent part of the day, as many
  conversations as its bytes hold (``NvmeTier.conversations_per_node`` × nodes, the
  bytes the hit rates of ``sizing.traffic.hit_rate`` count); the tiers are inclusive, so the
  users' own conversations are among them and the earlier ones are the rest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Placement:
    """Conversations by where they rest; each conversation is counted once.

    Attributes:
        on_gpus: resident on the GPUs (at most the users).
        in_cpu_tier: resting in the CPU-memory tier.
        on_nvme: earlier conversations of the day, only on the NVMe tier.
        recomputed: resting without a tier: their prefill is recomputed on return.
        in_shared_tier: beyond a cut CPU tier, resting in the shared tier.
        in_nvme_tier: users' conversations beyond a cut CPU tier that the NVMe tier keeps.
    """

    on_gpus: int
    in_cpu_tier: int
    on_nvme: int
    recomputed: int
    in_shared_tier: int = 0
    in_nvme_tier: int = 0

    @property
    def nvme_total(self) -> int:
        """Conversations resting only on the NVMe tier: the users' beyond a cut CPU tier
        and the day's earlier ones."""
        return self.on_nvme + self.in_nvme_tier


def placement(
    *,
    users: int,
    conversations_on_gpus: int,
    cpu_tier_gib: float,
    nvme_sized: bool,
    new_conversations_per_day: int,
    cpu_tier_conversations: int | None = None,
    shared_tier_sized: bool = False,
    nvme_conversations: int | None = None,
) -> Placement:
    """Where ``users`` conversations rest.

    Args:
        users: users, one conversation each (≥ 0).
        conversations_on_gpus: full-length conversations all GPUs hold (≥ 0).
        cpu_tier_gib: the CPU-memory tier, GiB (0: none sold).
        nvme_sized: whether the plan sells an NVMe tier.
        new_conversations_per_day: new conversations a day (≥ 0).
        cpu_tier_conversations: full-length conversations the CPU tier holds over all
            instances (``None``: every resting one, the uncut tier).
        shared_tier_sized: whether the plan sells a shared tier (it holds the resting
            conversations a cut CPU tier leaves out).
        nvme_conversations: full-length conversations the NVMe tier holds over all
            nodes (``None``: the whole day, an uncapped tier).

    Raises:
        ValueError: a count is negative.
    """
    if min(users, conversations_on_gpus, new_conversations_per_day) < 0:
        raise ValueError("users, conversations_on_gpus and new conversations must be >= 0")
    on_gpus = min(users, conversations_on_gpus)
    resting = users - on_gpus
    in_cpu = resting if cpu_tier_gib > 0 else 0
    if cpu_tier_conversations is not None:
        in_cpu = min(in_cpu, max(0, cpu_tier_conversations))
    day = new_conversations_per_day
    if nvme_conversations is not None:
        day = min(day, max(0, nvme_conversations))
    on_nvme = max(0, day - users) if nvme_sized else 0
    beyond = resting - in_cpu if in_cpu else 0
    in_nvme = 0
    if nvme_sized and nvme_conversations is not None:
        in_nvme = min(beyond, max(0, nvme_conversations - on_gpus - in_cpu))
    in_shared = beyond - in_nvme if shared_tier_sized else 0
    recomputed = resting - in_cpu - in_nvme - in_shared
    return Placement(on_gpus, in_cpu, on_nvme, recomputed, in_shared, in_nvme)
