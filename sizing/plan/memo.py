"""What the plans of one request or one configuration search compute once: the caller
creates a :class:`PlanMemo` and passes it to every :func:`sizing.plan.orchestrator.make_plan`
of that request or search, and drops it afterwards. Nothing is kept between callers:
the engine holds no state of its own (a repeated estimate is served from the web
side's cache instead).

A configuration search (:mod:`sizing.search.cheapest`) sizes about 160 GPU types,
counts and TP sizes of one workload: the base configurations of one GPU type and count
(NVMe on and off) share one layout; the plans of one GPU type and TP share the reload
figures, the performance model's times per turn and the evaluations of replica counts,
and the plans of every GPU type share the hit-rate windows of the workload's busy-hour
stream (:class:`sizing.serving.replica_model.ReplicaModels`). One plan serves its
traffic up to five times (the NVMe tier resized to the nodes, the plan without a tier)
and shares the same figures.
"""

from __future__ import annotations

from typing import Any

from sizing.memory.gpu_budget import BudgetRule
from sizing.model.spec import ModelSpec
from sizing.performance.hit_value import TransferEstimate, estimate
from sizing.plan.layout_choice import Parallelism
from sizing.plan.memory_layout import MemoryLayout, memory_layout
from sizing.serving.replica_model import ReplicaModels
from sizing.workload import Workload


class PlanMemo:
    """The figures the plans of one request or search share, by the inputs each reads
    (every key starts with the model, compared by value).

    Attributes:
        layouts: the :class:`~sizing.plan.memory_layout.MemoryLayout` of each model,
            platform, budget rule and the workload fields it reads.
        parallelisms: the layout on one node's GPUs per model, GPU type, count,
            conversation, rule, expert parallelism and TP size.
        transfers: the reload and TTFT figures per model, KV dtype, GPU type, TP,
            context, shared prompt and new tokens of a turn (they do not depend on the
            users, the tiers or the nodes).
        replica_models: the performance models bound to the plans' replicas.
    """

    def __init__(self) -> None:
        self.layouts: dict[tuple[Any, ...], MemoryLayout] = {}
        self.parallelisms: dict[tuple[Any, ...], Parallelism] = {}
        self.transfers: dict[tuple[Any, ...], TransferEstimate] = {}
        self.replica_models = ReplicaModels()

    def layout(
        self, model: ModelSpec, work: Workload, platform_slug: str, rule: BudgetRule
    ) -> MemoryLayout:
        """:func:`~sizing.plan.memory_layout.memory_layout`, once per model, platform,
        rule and the workload fields it reads (each with its type: an equal figure of
        another type is another key, as a note may quote it).

        Raises:
            SizingError, InfeasibleError: as :func:`~sizing.plan.memory_layout.memory_layout`.
        """
        read = (
            work.gpu,
            work.gpus_per_node,
            work.kv_dtype,
            work.context_tokens,
            work.shared_prompt_tokens,
            work.expert_parallel,
            work.tensor_parallel_size,
            work.max_host_memory_gb,
            work.nvme_conversations_per_day,
            work.serving_engine,
        )
        key = (model, platform_slug, rule, read, tuple(map(type, read)))
        found = self.layouts.get(key)
        if found is None:
            found = memory_layout(model, work, platform_slug, rule, self.parallelisms)
            self.layouts[key] = found
        return found

    def transfer(
        self,
        model: ModelSpec,
        work: Workload,
        gpu_slug: str,
        tensor_parallel_size: int,
        new_tokens: int,
    ) -> TransferEstimate:
        """:func:`~sizing.performance.hit_value.estimate` for ``work``'s KV dtype, context
        and shared prompt on ``gpu_slug`` at ``tensor_parallel_size``, ``new_tokens`` the
        new tokens of a turn, once per those inputs."""
        key: tuple[Any, ...] = (model, work.kv_dtype, gpu_slug, tensor_parallel_size)
        key += (work.context_tokens,)
        key += (work.shared_prompt_tokens, new_tokens)
        found = self.transfers.get(key)
        if found is None:
            found = self.transfers[key] = estimate(
                model=model,
                kv_dtype=work.kv_dtype,
                gpu_slug=gpu_slug,
                tp=tensor_parallel_size,
                context_tokens=work.context_tokens,
                shared_prompt_tokens=work.shared_prompt_tokens,
                new_tokens=new_tokens,
            )
        return found
