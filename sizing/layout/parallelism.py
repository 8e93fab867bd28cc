"""How a plan's GPUs form engine replicas, in numbers and in words.

A replica (one engine instance, or one data-parallel rank of an expert-parallel
engine) spans ``TP × PP`` GPUs: TP ranks inside a node, PP stages one per node. The
replica arithmetic is spelled out ("5 replicas × 8 GPUs (TP 8) = 40 GPUs") so that a
concurrency figure is never mistaken for a per-replica or a total one (reference
known_failures.md, class 11). Pipeline stages follow vLLM's layer split
(``vllm/distributed/utils.py::get_pp_indices``).
"""

from __future__ import annotations

from dataclasses import dataclass


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def replica_layout(
    *,
    gpus_total: int,
    tensor_parallel_size: int,
    pipeline_parallel_size: int = 1,
    expert_parallel_size: int = 1,
) -> str:
    """The replica arithmetic in words: 40 GPUs at TP 8 → "5 replicas × 8 GPUs (TP 8) =
    40 GPUs".

    With PP the stages are named ("TP 4 × PP 2"); with EP the replicas are the
    data-parallel ranks of one engine whose experts are spread over EP GPUs.

    Raises:
        ValueError: if a size is not positive or ``gpus_total`` is not a multiple of
            ``TP × PP``.
    """
    tp, pp, ep = tensor_parallel_size, pipeline_parallel_size, expert_parallel_size
    if min(gpus_total, tp, pp, ep) <= 0:
        raise ValueError("GPU count and parallel sizes must be positive")
    per = tp * pp
    if gpus_total % per:
        raise ValueError(f"{gpus_total} GPUs cannot be split into replicas of TP {tp} × PP {pp}")
    n = gpus_total // per
    shape = f"TP {tp}" if pp == 1 else f"TP {tp} × PP {pp}"
    if ep > 1:
        return (
            f"{_plural(n, 'data-parallel rank')} × {_plural(per, 'GPU')} ({shape}), "
            f"experts over EP {ep} = {_plural(gpus_total, 'GPU')}"
        )
    return f"{_plural(n, 'replica')} × {_plural(per, 'GPU')} ({shape}) = {gpus_total:,} GPUs"


@dataclass(frozen=True)
class Parallelism:
    """How the plan's GPUs are split into engine replicas.

    Attributes:
        tensor_parallel_size: GPUs per pipeline stage of a replica (TP).
        replicas: replicas with a share on each node (GPUs per node / TP); with expert
            parallel these are the data-parallel ranks of one engine per node.
        nodes: nodes in the plan.
        kv_cache_gib_per_gpu: KV budget of one card, GiB.
        conversations_per_replica: full-length conversations one replica holds.
        pipeline_parallel_size: pipeline stages per replica, one per node (PP).
        expert_parallel_size: GPUs the routed experts are spread over (1: no EP).
        weights_gib_per_gpu: weights on one card, GiB.
        conversation_gib_per_gpu: one conversation's own cache on the binding card, GiB
            (without the shared prefix).
        shared_prefix_gib_per_gpu: the shared system prompt on one card, GiB.
    """

    tensor_parallel_size: int
    replicas: int
    nodes: int
    kv_cache_gib_per_gpu: float
    conversations_per_replica: int
    pipeline_parallel_size: int = 1
    expert_parallel_size: int = 1
    weights_gib_per_gpu: float = 0.0
    conversation_gib_per_gpu: float = 0.0
    shared_prefix_gib_per_gpu: float = 0.0

    @property
    def gpus_per_replica(self) -> int:
        """GPUs of one replica (TP × PP)."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def total_replicas(self) -> int:
        """Engine replicas (or data-parallel ranks) over all nodes."""
        return self.replicas * self.nodes // self.pipeline_parallel_size

    @property
    def gpus(self) -> int:
        """GPUs in the plan."""
        return self.gpus_per_replica * self.total_replicas

    @property
    def data_parallel_size(self) -> int:
        """Data-parallel ranks of the expert-parallel engine (1 without EP)."""
        return self.total_replicas if self.expert_parallel_size > 1 else 1

    @property
    def conversations_on_gpus(self) -> int:
        """Full-length conversations resident on all GPUs of the plan."""
        return self.conversations_per_replica * self.total_replicas

    @property
    def conversations_per_gpu(self) -> float:
        """Full-length conversations per card (a whole number at TP 1, PP 1)."""
        per_gpu = self.conversations_per_replica / self.gpus_per_replica
        return int(per_gpu) if per_gpu == int(per_gpu) else per_gpu

    @property
    def layout(self) -> str:
        """The replica arithmetic in words (see :func:`replica_layout`)."""
        return replica_layout(
            gpus_total=self.gpus,
            tensor_parallel_size=self.tensor_parallel_size,
            pipeline_parallel_size=self.pipeline_parallel_size,
            expert_parallel_size=self.expert_parallel_size,
        )


def pipeline_stages(num_layers: int, pp: int) -> list[tuple[int, int]]:
    """Layer ranges ``[start, end)`` of each pipeline stage, as vLLM assigns them.

    ``num_layers // pp`` each; the remainder goes one by one to the stages before the
    last (``vllm/distributed/utils.py::get_pp_indices``). 61 layers over 2 stages:
    ``[(0, 31), (31, 61)]``.

    Raises:
        ValueError: if ``pp`` is not between 1 and ``num_layers``.
    """
    if not 1 <= pp <= num_layers:
        raise ValueError(f"pipeline parallel size must be between 1 and {num_layers}, got {pp}")
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    bounds, start = [], 0
    for size in sizes:
        bounds.append((start, start + size))
        start += size
    return bounds
