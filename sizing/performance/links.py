"""Moving bytes inside one GPU node: HBM reads and TP all-reduces.

- HBM: the card's datasheet bandwidth (``sizing/data/hardware.json``) at the
  ``decode.memory_efficiency`` share of ``sizing/data/performance.json``.
- Mixture of experts: ``b`` tokens routed to ``k`` of ``E`` experts each touch on
  average ``E · (1 − (1 − k/E)^b)`` distinct experts per layer (independent uniform
  routing; Shazeer et al. 2017 top-k gating), so a step reads that share of the
  expert weights.
- All-reduce: NCCL's ring moves ``2 (TP − 1) / TP`` of the buffer over each GPU's link
  (nccl-tests ``doc/PERFORMANCE.md``, bus bandwidth). NVLink at the share of the line
  rate NCCL reaches (370 of 450 GB/s on H100, NVIDIA's answer in nccl-tests issue
  #212); without NVLink over PCIe at the measured pinned host-to-device rate
  (:func:`sizing.hardware.catalog.pcie_h2d_gbs`) times the same share; plus a fixed latency per
  operation. Constants: ``tp`` in ``sizing/data/performance.json``.
"""

from __future__ import annotations

from sizing.hardware import catalog
from sizing.performance.calibration import constant
from sizing.performance.shape import ModelShape


def expert_share(shape: ModelShape, tokens: int) -> float:
    """Share of the routed experts ``tokens`` tokens touch in one forward pass (1 for a
    dense model)."""
    if not shape.experts or not shape.experts_per_token:
        return 1.0
    miss = 1.0 - shape.experts_per_token / shape.experts
    return 1.0 - miss ** max(tokens, 1)


def memory_gbs(gpu: catalog.Gpu) -> float:
    """Effective HBM/GDDR read rate of one card, GB/s."""
    return float(gpu.memory_bandwidth_gbps or 0.0) * constant("decode", "memory_efficiency")


def weights_read_s(shape: ModelShape, gpu: catalog.Gpu, tp: int, tokens: int) -> float:
    """Seconds one rank needs to read the weights a pass of ``tokens`` tokens uses."""
    dense = shape.weights_bytes - shape.expert_bytes
    used = dense + shape.expert_bytes * expert_share(shape, tokens)
    rate = memory_gbs(gpu)
    return used / tp / (rate * 1e9) if rate else 0.0


def allreduce_gbs(gpu: catalog.Gpu) -> float:
    """Bus bandwidth of one GPU in an all-reduce, GB/s (NVLink if the card has it)."""
    share = constant("tp", "nccl_share_of_line_rate")
    link = gpu.nvlink_gbps_per_direction
    if link:
        return link * share
    return catalog.pcie_h2d_gbs(gpu.pcie_gen) * share


def allreduce_s(gpu: catalog.Gpu, tp: int, operations: int, buffer_bytes: int) -> float:
    """Seconds of ``operations`` all-reduces of ``buffer_bytes`` each over ``tp`` ranks
    (0 at TP 1)."""
    if tp <= 1 or operations <= 0:
        return 0.0
    latency = constant("tp", "allreduce_latency_us") / 1e6
    moved = 2 * (tp - 1) / tp * buffer_bytes
    return operations * (latency + moved / (allreduce_gbs(gpu) * 1e9))
