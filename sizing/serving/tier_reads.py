"""Hits from the NVMe tier and the shared tier where no reload was measured: timed from the
tier's read rate, so that such a hit lowers TTFT and prefill work instead of counting as
a miss.

The plan's engine, vLLM native offloading, reads its ``fs`` tier on the NVMe mount, an
``fs`` tier on the NFS mount or an ``obj`` tier on S3 into its CPU buffer and copies
from there to the GPUs (``TieringOffloadingSpec``, :mod:`sizing.engines.vllm`; seed:
only the CPU tier has direct GPU access). No published measurement covers these paths
for vLLM (``sizing/data/performance.json`` has its GPU and CPU paths only), so the
figure is an estimate with **no measured basis**:

``hit_ms = CPU-tier hit (the measured path: its fixed per-request cost, per-block set-up,
PCIe copy and the prefill of the new tokens) + cached tokens × KV bytes per token ÷ the
tier's read rate per instance``

- NVMe read rate per instance: the node's drives' sequential read rate
  (``seq_read_gbs`` × drives, ``sizing/data/hardware.json``; a Gen5 x4 drive reads below
  16 GB/s, :mod:`sizing.memory.nvme`) shared evenly by the node's instances.
- Shared-tier read rate per instance: :data:`SHARED_LINK_GBS_PER_NODE`, one 100 GbE port
  of each node to the storage network (100 Gbit/s = 12.5 GB/s; the NetApp seed mounts
  ONTAP pNFS over RDMA/RoCE, the BOM's network adapter is 2 × 100 GbE), shared evenly by
  the node's instances. The storage must deliver that rate; slower storage makes these
  hits slower.

Cross-checks, not fitted (``offload_benefit_points.jsonl``): SGLang's file tier read
7.1 GB/s for one instance (``sglang-26305-minimax-m27``); vLLM with its Mooncake
connector reloaded 64K tokens × 96 KiB = 6.4 GB from a remote RDMA store in 0.97 s
against 0.11 s for a GPU hit, about 7.5 GB/s (``agentic-kvc-h20-tiers``); SGLang's EIC
store read 0.57 GB/s per rank (``sglang-eic-dsv4-h20``). The estimate's 3.1–3.5 GB/s per
instance on a four-instance node lies inside that range.
"""

from __future__ import annotations

from dataclasses import dataclass

SHARED_LINK_GBS_PER_NODE = 12.5
"""Read rate of one node from the shared tier, GB/s: one 100 GbE port (module doc)."""

NO_MEASURED_BASIS = {
    "nvme": "no measured basis: NVMe-tier hits timed from the drives' read rate",
    "shared": "no measured basis: shared-tier hits timed from one 100 GbE port per node",
}
"""What each estimated tier's figures rest on, in English (the performance model's
"no measured basis" wording)."""


@dataclass(frozen=True)
class TierReadRates:
    """Read rates of the tiers without a measured reload, GB/s per instance (0: no tier).

    Attributes:
        nvme_gbs: from the node's NVMe drives.
        shared_gbs: from the shared tier.
    """

    nvme_gbs: float
    shared_gbs: float

    def rate(self, tier: str) -> float:
        """The read rate of ``tier`` (``nvme`` or ``shared``), GB/s per instance.

        Raises:
            KeyError: for another tier.
        """
        return {"nvme": self.nvme_gbs, "shared": self.shared_gbs}[tier]


def read_rates(*, nvme_read_gbs_per_node: float, instances_per_node: int) -> TierReadRates:
    """Each instance's share of the node's NVMe and shared-tier read rates (module doc).

    Args:
        nvme_read_gbs_per_node: the node's drives' sequential read rate, GB/s (0: none).
        instances_per_node: engine instances that share them (≥ 1).

    Raises:
        ValueError: for a negative rate or fewer than one instance.
    """
    if nvme_read_gbs_per_node < 0 or instances_per_node < 1:
        raise ValueError("the read rate must be >= 0 and the instances >= 1")
    return TierReadRates(
        nvme_gbs=nvme_read_gbs_per_node / instances_per_node,
        shared_gbs=SHARED_LINK_GBS_PER_NODE / instances_per_node,
    )


def staged_hit_ms(
    *, cpu_hit_ms: float, cached_tokens: int, kv_bytes_per_token: float, read_gbs: float
) -> float | None:
    """TTFT of a hit read from a tier into CPU memory first, ms (module doc), or ``None``
    when the tier has no read rate (no such tier: the hit costs a miss).

    Args:
        cpu_hit_ms: TTFT of the same request hit in the CPU tier, ms.
        cached_tokens: tokens reloaded.
        kv_bytes_per_token: KV bytes of one token in the tier (all ranks), bytes.
        read_gbs: the tier's read rate for this instance, GB/s.

    Raises:
        ValueError: for a negative token count or bytes per token.
    """
    if cached_tokens < 0 or kv_bytes_per_token < 0:
        raise ValueError("cached tokens and bytes per token must be >= 0")
    if read_gbs <= 0:
        return None
    return cpu_hit_ms + cached_tokens * kv_bytes_per_token / (read_gbs * 1e9) * 1e3
