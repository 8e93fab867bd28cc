"""What the plans of one request or one configuration search compute once: the caller
creates a :class:`PlanMemo`, passes it to every :func:`sizing.plan.orchestrator.make_plan`
of that request or search, and drops it afterwards; nothing in it outlives them (a
repeated estimate is served from the web side's cache instead).

A configuration search (:mod:`sizing.search.cheapest`) sizes about 160 GPU types,
counts and TP sizes of one workload: the base configurations of one GPU type and count
(NVMe on and off) share one layout; the plans of one GPU type and TP share the service
table and the evaluations of replica counts, and the plans of every GPU type share the
hit-rate windows of the workload's busy-hour stream
(:class:`sizing.serving.replica_model.ReplicaModels`). One plan serves its traffic up to
five times (the NVMe tier resized to the nodes, the plan without a tier) and shares the
same figures.

Beyond the memo, only pure functions of frozen inputs are cached, each for a bounded
number of latest inputs: the figures a workload keeps when only its users change, a
model's shape (:func:`sizing.performance.model_shape`), the performance model's times
per turn (:func:`sizing.serving.replica_model.turn_times`) and the reload figures
(:func:`transfer_estimate`).
"""

from __future__ import annotations

from functools import lru_cache
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
        replica_models: the performance models bound to the plans' replicas.
    """

    def __init__(self) -> None:
        self.layouts: dict[tuple[Any, ...], MemoryLayout] = {}
        self.parallelisms: dict[tuple[Any, ...], Parallelism] = {}
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


@lru_cache(maxsize=256)
def transfer_estimate(
    model: ModelSpec,
    kv_dtype: str,
    gpu_slug: str,
    tensor_parallel_size: int,
    context_tokens: int,
    shared_prompt_tokens: int,
    new_tokens: int,
) -> TransferEstimate:
    """:func:`~sizing.performance.hit_value.estimate` of ``model`` at ``kv_dtype`` on
    ``gpu_slug`` at ``tensor_parallel_size`` for a ``context_tokens`` conversation with a
    ``shared_prompt_tokens`` prompt and ``new_tokens`` new tokens a turn.

    A pure function of frozen inputs, cached for the 256 latest: the figures do not
    depend on the users, the tiers or the nodes, so the plans of a customer changing
    those, and a search's NVMe, DIMM and shared-tier variants, share them.
    """
    return estimate(
        model=model,
        kv_dtype=kv_dtype,
        gpu_slug=gpu_slug,
        tp=tensor_parallel_size,
        context_tokens=context_tokens,
        shared_prompt_tokens=shared_prompt_tokens,
        new_tokens=new_tokens,
    )
