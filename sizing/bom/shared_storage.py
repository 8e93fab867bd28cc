"""The shared tier as a line of the bill of materials: what storage the nodes need.

A plan with more than one node, or with more users than the nodes' CPU tiers hold, has a
shared NFS/pNFS or S3 tier (:mod:`sizing.layout.cluster`, NetApp seed: "S3 or NAS provides the
common storage tier that several engines read and write"). The customer either brings
it (an ONTAP export or a StorageGRID bucket already in the data centre) or buys it; the
line states what it must deliver either way:

- **Capacity**: every user's conversation once, TB (10^12 B), rounded up to whole TB;
  the line's quantity is that count of :data:`STORAGE_SKU` (one TB usable) for the whole
  plan, not per node.
- **Network**: GB/s per node, the larger of the reads of returns that hit only the
  shared tier and the writes of new KV (:attr:`sizing.layout.cluster.SharedTier.gbps_per_node`),
  over all nodes together the sum of both directions.
- **Hashing**: every instance runs with the same ``PYTHONHASHSEED`` and prefix hash
  algorithm, else blocks one instance writes are invisible to the others (vLLM
  ``--prefix-caching-hash-algo``, ``vllm/v1/core/kv_cache_utils.py``; engine_flags.md
  §1.4); the bundle sets both (:mod:`sizing.engines.shared_tier`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.layout.cluster import SharedTier

STORAGE_SKU = "STO-KV-SHARED-TB"
"""Price-list SKU of one TB usable of shared KV storage (NFS/pNFS or S3)."""
HASH_ALGORITHM = "sha256"
"""The prefix hash the plan's engine uses on every instance (vLLM's ``HASH_ALGO``,
``sizing.engines.vllm``; pinned there, repeated here for the line's wording)."""


@dataclass(frozen=True)
class StorageRequirement:
    """What the shared tier must hold and deliver.

    Attributes:
        nodes: nodes that mount it.
        capacity_tb: capacity, TB (10^12 B).
        gbps_per_node: network rate each node needs to it, GB/s (the larger direction).
        read_gbps_per_node: reloads, GB/s per node.
        write_gbps_per_node: new KV written through, GB/s per node.
        gbps_total: what the storage delivers to all nodes together, GB/s.
    """

    nodes: int
    capacity_tb: float
    gbps_per_node: float
    read_gbps_per_node: float
    write_gbps_per_node: float
    gbps_total: float

    @property
    def quantity_tb(self) -> int:
        """Whole TB of :data:`STORAGE_SKU` the line sells (at least 1)."""
        return max(1, math.ceil(self.capacity_tb - 1e-9))

    def why_en(self) -> str:
        """The line's reason in English: nodes, TB, GB/s per node and the hashing rule."""
        return (
            f"shared KV tier (NFS/pNFS or S3) for {self.nodes} {_nodes_en(self.nodes)}: "
            f"{self.capacity_tb:,.1f} TB, {self.gbps_per_node:,.2f} GB/s per node "
            f"({self.gbps_total:,.1f} GB/s in all); every instance on the same "
            f"PYTHONHASHSEED and hash algorithm ({HASH_ALGORITHM})"
        )

    def why_de(self) -> str:
        """The same reason in German."""
        return (
            f"gemeinsame KV-Stufe (NFS/pNFS oder S3) für {self.nodes} Knoten: "
            f"{_de(self.capacity_tb, 1)} TB, {_de(self.gbps_per_node, 2)} GB/s je Knoten "
            f"({_de(self.gbps_total, 1)} GB/s insgesamt); jede Instanz mit demselben "
            f"PYTHONHASHSEED und Hash-Algorithmus ({HASH_ALGORITHM})"
        )


def _nodes_en(count: int) -> str:
    """ "node" or "nodes" for ``count``."""
    return "node" if count == 1 else "nodes"


def _de(value: float, digits: int) -> str:
    """``value`` with German separators (1.234,5)."""
    return f"{value:,.{digits}f}".replace(",", "\0").replace(".", ",").replace("\0", ".")


def storage_requirement(shared: SharedTier | None) -> StorageRequirement | None:
    """The storage line's figures for a plan's shared tier, or ``None`` without one.

    Args:
        shared: ``plan.serving.shared`` (:func:`sizing.layout.cluster.shared_tier`).

    Source: module docstring.
    """
    if shared is None:
        return None
    return StorageRequirement(
        nodes=shared.nodes,
        capacity_tb=shared.capacity_tb,
        gbps_per_node=shared.gbps_per_node,
        read_gbps_per_node=shared.read_gbps_per_node,
        write_gbps_per_node=shared.write_gbps_per_node,
        gbps_total=shared.gbps_total,
    )
