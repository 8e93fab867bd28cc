"""Reload time over PCIe against the time to recompute a conversation's prefill.

- Reload: a conversation's KV moves from pinned CPU memory to the GPU over PCIe. Each
  tensor-parallel rank reloads its own share over its own x16 link. Measured pinned
  host-to-device rate on Gen5 x16: 55.37 GB/s (nvbandwidth, H100 copy engine); the
  seed document's "64 GB/s per direction" is the nominal figure. A 1 GiB conversation
  reloads in about 20 ms.
- Recompute: a prefill of ``T`` tokens costs about ``2 × N × T`` FLOPs for ``N`` active
  parameters (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1) plus
  causal attention, ``2 × layers × T² × d_attn``. It runs at a share of the GPU's dense
  tensor throughput (:data:`PREFILL_MFU`, a planning assumption, stated as such).
"""

from __future__ import annotations

from dataclasses import dataclass

PREFILL_MFU = 0.4
"""Share of dense tensor throughput a long prefill reaches. Planning assumption: large
prefills on Hopper/Blackwell typically reach 40-60 % model FLOPs utilisation; the
lower end keeps the recompute estimate honest for the customer."""


@dataclass(frozen=True)
class TransferEstimate:
    """Reload versus recompute for one full-length conversation.

    Attributes:
        reload_ms: time to copy the conversation's KV from CPU memory, ms.
        recompute_ms: time to prefill it again, ms.
        pcie_gbs: host-to-device rate used, GB/s.
    """

    reload_ms: float
    recompute_ms: float
    pcie_gbs: float

    @property
    def speedup(self) -> float:
        """How many times faster a reload is than a recompute."""
        return self.recompute_ms / self.reload_ms if self.reload_ms else float("inf")


def prefill_flops(*, active_params: int, tokens: int, layers: int, attn_width: int) -> float:
    """FLOPs of one prefill of ``tokens`` tokens (2·N·T + 2·layers·T²·d_attn)."""
    return 2.0 * active_params * tokens + 2.0 * layers * tokens**2 * attn_width


def estimate(
    *,
    conversation_bytes_per_rank: int,
    pcie_gbs: float,
    active_params: int,
    tokens: int,
    layers: int,
    attn_width: int,
    gpu_dense_tflops: float,
    tp: int,
) -> TransferEstimate:
    """Reload and recompute time of one conversation of ``tokens`` tokens.

    Args:
        conversation_bytes_per_rank: KV bytes on one TP rank.
        pcie_gbs: host-to-device rate per link, GB/s.
        active_params: parameters active per token (all for dense models).
        tokens: context length.
        layers: decoder layers.
        attn_width: query heads × head_dim.
        gpu_dense_tflops: dense tensor TFLOPS of one card at the weights' precision.
        tp: tensor parallel size (ranks work in parallel).

    Raises:
        ValueError: if a rate is not positive.
    """
    if pcie_gbs <= 0 or gpu_dense_tflops <= 0 or tp <= 0:
        raise ValueError("pcie_gbs, gpu_dense_tflops and tp must be positive")
    reload_s = conversation_bytes_per_rank / (pcie_gbs * 1e9)
    flops = prefill_flops(
        active_params=active_params, tokens=tokens, layers=layers, attn_width=attn_width
    )
    recompute_s = flops / (gpu_dense_tflops * 1e12 * PREFILL_MFU * tp)
    return TransferEstimate(
        reload_ms=reload_s * 1e3, recompute_ms=recompute_s * 1e3, pcie_gbs=pcie_gbs
    )
