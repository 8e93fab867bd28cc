"""The KV-cache budget of one GPU under the seed's planning rule, after its weights.

Planning rule (sizing article, docs/sizing.md §3): the KV cache of one card is

    kv_per_gpu_gib = utilization × reported_gib − overhead_gib − weights_per_gpu_gib

with utilization 0.9, the driver-reported total (95.6 GiB for the RTX PRO 6000
Blackwell Server Edition), 3 GiB for CUDA graphs and activations. Seed example:
0.9 × 95.6 − 3 − 32.0 = 51 GiB, 51 full-length 1 GiB conversations per card.

Weights per card (:func:`weights_per_gpu_gib`):

- tensor parallel (TP) splits every weight matrix over the TP ranks; pipeline parallel
  (PP) splits the layers over PP stages: ``weights / (TP × PP)``;
- with expert parallel (EP) the routed experts are sharded over the EP ranks instead,
  and vLLM's ``--enable-expert-parallel`` makes ``EP = TP × DP``: the experts are spread
  over all data-parallel ranks while attention and dense weights stay split by TP only
  (vLLM docs, "Expert Parallel Deployment"; ``vllm/config/parallel.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.hardware.catalog import Gpu


@dataclass(frozen=True)
class BudgetRule:
    """The seed's planning rule for the GPU KV budget.

    Attributes:
        utilization: share of the reported memory the engine may use (0.9, vLLM's
            long-standing ``--gpu-memory-utilization`` default).
        overhead_gib: CUDA graphs and activations per card, in GiB (3, sizing article).
    """

    utilization: float = 0.9
    overhead_gib: float = 3.0


def weights_per_gpu_gib(
    *, weights_gib: float, expert_weights_gib: float = 0.0, tp: int, pp: int = 1, ep: int = 1
) -> float:
    """Weights on one card, GiB.

    ``(dense / TP + experts / EP) / PP`` with ``dense = weights − experts``; without EP
    (``ep`` 1) the experts are split by TP like every other matrix, so this is
    ``weights / (TP × PP)``. Source: module docstring (vLLM expert-parallel docs).

    Raises:
        ValueError: if a parallel size is not positive.
    """
    if min(tp, pp, ep) <= 0:
        raise ValueError("parallel sizes must be positive")
    experts_over = ep if ep > 1 else tp
    dense = weights_gib - expert_weights_gib
    return (dense / tp + expert_weights_gib / experts_over) / pp


def kv_budget_per_gpu_gib(gpu: Gpu, weights_gib_on_gpu: float, rule: BudgetRule) -> float:
    """KV-cache budget of one card in GiB under the planning rule (may be negative).

    Args:
        gpu: the card; its driver-reported total in GiB is used.
        weights_gib_on_gpu: weights on this card, GiB (:func:`weights_per_gpu_gib`).
        rule: utilization and overhead.
    """
    return rule.utilization * gpu.reported_gib - rule.overhead_gib - weights_gib_on_gpu
