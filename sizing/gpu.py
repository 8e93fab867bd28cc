"""GPU KV budget per card, tensor parallel size, replicas and resident conversations.

Planning rule (seed document, DESIGN §3.2): the KV cache of one card is

    kv_per_gpu_gib = utilization × reported_gib − overhead_gib − weights_gib / TP

with utilization 0.9, the driver-reported total (95.6 GiB for the RTX PRO 6000
Blackwell Server Edition), 3 GiB for CUDA graphs and activations, and the checkpoint's
weights split over the tensor-parallel ranks. Seed example: 0.9 × 95.6 − 3 − 32.0 =
51 GiB, 51 full-length 1 GiB conversations per card.

Tensor parallel sizes follow vLLM's rule (``vllm/config/parallel.py``,
``ModelConfig.verify_with_parallel_config``): TP must divide the attention heads, and
either TP divides the KV heads or the KV heads divide TP (then heads are replicated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.architecture import Architecture
from sizing.catalog import Gpu
from sizing.errors import InfeasibleError


@dataclass(frozen=True)
class BudgetRule:
    """The seed's planning rule for the GPU KV budget.

    Attributes:
        utilization: share of the reported memory the engine may use (0.9, vLLM's
            long-standing ``--gpu-memory-utilization`` default).
        overhead_gib: CUDA graphs and activations per card, in GiB (3, seed document).
    """

    utilization: float = 0.9
    overhead_gib: float = 3.0


@dataclass(frozen=True)
class Parallelism:
    """How the GPUs of one node are split into engine instances.

    Attributes:
        tensor_parallel_size: GPUs per replica.
        replicas: engine instances per node.
        nodes: nodes in the plan.
        kv_cache_gib_per_gpu: KV budget of one card, GiB.
        conversations_per_replica: full-length conversations one replica holds.
    """

    tensor_parallel_size: int
    replicas: int
    nodes: int
    kv_cache_gib_per_gpu: float
    conversations_per_replica: int

    @property
    def gpus(self) -> int:
        """GPUs in the plan."""
        return self.tensor_parallel_size * self.replicas * self.nodes

    @property
    def total_replicas(self) -> int:
        """Engine instances over all nodes."""
        return self.replicas * self.nodes

    @property
    def conversations_on_gpus(self) -> int:
        """Full-length conversations resident on all GPUs of the plan."""
        return self.conversations_per_replica * self.total_replicas

    @property
    def conversations_per_gpu(self) -> float:
        """Full-length conversations per card (a whole number at TP 1)."""
        per_gpu = self.conversations_per_replica / self.tensor_parallel_size
        return int(per_gpu) if per_gpu == int(per_gpu) else per_gpu


def kv_budget_per_gpu_gib(gpu: Gpu, weights_gib: float, tp: int, rule: BudgetRule) -> float:
    """KV-cache budget of one card in GiB under the planning rule (may be negative).

    Args:
        gpu: the card; its driver-reported total in GiB is used.
        weights_gib: the whole model's weights, GiB.
        tp: tensor parallel size (weights split evenly over the ranks).
        rule: utilization and overhead.
    """
    return rule.utilization * gpu.reported_gib - rule.overhead_gib - weights_gib / tp


def valid_tp_sizes(arch: Architecture, gpus_per_node: int) -> list[int]:
    """Tensor parallel sizes that vLLM accepts for ``arch`` within one node, ascending."""
    sizes = []
    for tp in range(1, gpus_per_node + 1):
        if gpus_per_node % tp or arch.num_attention_heads % tp:
            continue
        kv = arch.num_kv_heads
        if arch.uses_mla or kv % tp == 0 or tp % kv == 0:
            sizes.append(tp)
    return sizes


def choose_parallelism(
    *,
    arch: Architecture,
    gpu: Gpu,
    gpus_per_node: int,
    weights_gib: float,
    conversation_gib_per_rank: dict[int, float],
    rule: BudgetRule,
) -> Parallelism:
    """Pick the smallest TP at which the weights and one full conversation fit.

    Smaller TP means more replicas and no all-reduce traffic; the plan never proposes
    a layout whose KV pool cannot hold one max-length request (vLLM refuses to start).

    Args:
        arch: model geometry.
        gpu: the card.
        gpus_per_node: GPUs in one node.
        weights_gib: the whole model's weights, GiB.
        conversation_gib_per_rank: TP size → GiB one conversation holds on one rank.
        rule: the budget rule.

    Raises:
        InfeasibleError: naming the binding constraint and what would fix it.
    """
    sizes = valid_tp_sizes(arch, gpus_per_node)
    if not sizes:
        raise InfeasibleError(
            "gpus_per_node",
            f"no tensor parallel size fits {gpus_per_node} GPUs: the model's "
            f"{arch.num_attention_heads} attention heads are not divisible by any of them",
            binding="tensor parallel divisibility",
            fixes=("choose a GPU count that divides the attention heads",),
        )
    for tp in sizes:
        budget = kv_budget_per_gpu_gib(gpu, weights_gib, tp, rule)
        per_conv = conversation_gib_per_rank[tp]
        if budget <= 0 or budget < per_conv:
            continue
        per_replica = math.floor(budget / per_conv + 1e-9)
        return Parallelism(
            tensor_parallel_size=tp,
            replicas=gpus_per_node // tp,
            nodes=1,
            kv_cache_gib_per_gpu=budget,
            conversations_per_replica=per_replica,
        )
    best = sizes[-1]
    budget = kv_budget_per_gpu_gib(gpu, weights_gib, best, rule)
    if budget <= 0:
        raise InfeasibleError(
            "gpus_per_node",
            f"the weights ({weights_gib:.1f} GiB) do not fit on {gpus_per_node} × {gpu.name} "
            f"even at tensor parallel {best}: {budget:.1f} GiB would be left for the KV cache",
            binding="weights do not fit at this TP",
            fixes=("more GPUs per node", "a GPU with more memory", "FP8 or 4-bit weights"),
        )
    raise InfeasibleError(
        "context",
        f"one conversation needs {conversation_gib_per_rank[best]:.2f} GiB per GPU at tensor "
        f"parallel {best}, but only {budget:.2f} GiB is left for the KV cache",
        binding="one max-length conversation does not fit",
        fixes=(
            "a shorter context",
            "an FP8 KV cache",
            "more GPUs per node",
            "a GPU with more memory",
        ),
    )
