"""The part of a plan that the number of users leaves alone: the KV geometry, the layout on
the node's GPUs, the bytes per rank, each node's buffer limit, the NVMe tier as first
sized for one node and one replica of the layout, composed for
:func:`sizing.plan.orchestrator.make_plan`.

Rules and sources are in the modules it calls (:mod:`sizing.model.architecture`,
:mod:`sizing.plan.layout_choice`, :mod:`sizing.memory.gpu_budget`, :mod:`sizing.memory.stage_cache`,
:mod:`sizing.memory.rank_bytes`, :mod:`sizing.layout.cluster`, :mod:`sizing.memory.host_memory`,
:mod:`sizing.memory.nvme`). None of it depends on the users or the
traffic, so the plans of one configuration search that share a GPU type, count and
conversation compute it once (:class:`sizing.plan.memo.PlanMemo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sizing.hardware import catalog
from sizing.hardware.catalog import Gpu, Platform
from sizing.layout.cluster import max_buffer_gb_per_node
from sizing.memory.gpu_budget import BudgetRule
from sizing.memory.host_memory import host_memory_cap_gb
from sizing.memory.nvme import NvmeTier, nvme_tier
from sizing.memory.rank_bytes import RankBytes, stage_bytes
from sizing.memory.stage_cache import ConversationShape
from sizing.model.architecture import conversation_bytes, kv_bytes_per_token
from sizing.model.checkpoint import WEIGHT_BITS
from sizing.model.experts import expert_weights_bytes
from sizing.model.spec import ModelSpec
from sizing.plan.layout_choice import Parallelism, choose_parallelism
from sizing.serving.replica_model import Replica
from sizing.units import GIB
from sizing.workload import Workload


@dataclass(frozen=True)
class MemoryLayout:
    """A plan's layout before the traffic.

    Attributes:
        gpu, platform: the catalog's card and server platform.
        kv_bytes_per_token: KV of one token, whole model, bytes.
        conversation_bytes: one full-length conversation, whole model, bytes.
        shared_prompt_bytes: the shared system prompt, whole model, bytes.
        parallelism: the layout on one node's GPUs
        (:func:`sizing.plan.layout_choice.choose_parallelism`).
        ranks: the bytes each rank stores of a conversation.
        node_gpu_gb: the node's GPU memory, GB.
        buffer_cap_gb: the most pinned CPU-tier memory one node holds, GB.
        nvme: the NVMe tier as first sized (for one node).
        engine_conversation_bytes: one conversation in the serving engine's CPU tier.
        replica: one replica of the layout (:class:`~sizing.serving.replica_model.Replica`).
    """

    gpu: Gpu
    platform: Platform
    kv_bytes_per_token: int
    conversation_bytes: int
    shared_prompt_bytes: int
    parallelism: Parallelism
    ranks: RankBytes
    node_gpu_gb: float
    buffer_cap_gb: float
    nvme: NvmeTier
    engine_conversation_bytes: int
    replica: Replica


def _pool_tokens(par: Parallelism, unique_tokens: int) -> float:
    """One replica's KV pool in tokens of conversation (the shared prompt aside): the
    conversations its binding card holds, each of ``unique_tokens``."""
    if par.conversation_gib_per_gpu <= 0:  # a fixed state only: length costs nothing
        return float(par.conversations_per_replica * unique_tokens)
    free = max(0.0, par.kv_cache_gib_per_gpu - par.shared_prefix_gib_per_gpu)
    return free / par.conversation_gib_per_gpu * unique_tokens


def memory_layout(
    model: ModelSpec,
    work: Workload,
    platform_slug: str,
    rule: BudgetRule,
    parallelisms: dict[tuple[Any, ...], Parallelism] | None = None,
) -> MemoryLayout:
    """The :class:`MemoryLayout` of ``model`` for ``work`` on ``platform_slug`` under
    ``rule``. ``parallelisms`` holds the layouts on the node's GPUs already chosen for
    the caller's other plans, by model, GPU type, count, conversation, rule, expert
    parallelism and TP size (the layouts of other buffer limits, NVMe tiers and engines
    share them; filled here).

    Raises:
        SizingError: an unknown GPU or platform, or a TP size the node cannot take.
        InfeasibleError: no layout holds the weights and one conversation.
    """
    gpu = catalog.gpu(work.gpu)
    platform = catalog.platform(platform_slug)
    arch = model.architecture
    kv_dtype = work.kv_dtype
    ctx = work.context_tokens

    per_token = kv_bytes_per_token(arch, kv_dtype)
    conv_bytes = conversation_bytes(arch, kv_dtype, ctx)
    shape = ConversationShape(kv_dtype, ctx, work.shared_prompt_tokens)
    key: tuple[Any, ...] = (model, gpu.slug, work.gpus_per_node, shape, rule)
    key += (work.expert_parallel, work.tensor_parallel_size)
    par = None if parallelisms is None else parallelisms.get(key)
    if par is None:
        par = choose_parallelism(
            arch=arch,
            gpu=gpu,
            gpus_per_node=work.gpus_per_node,
            weights_gib=model.weights_bytes / GIB,
            work=shape,
            rule=rule,
            expert_weights_gib=expert_weights_bytes(
                model.config, model.weight_format, model.weights_bytes
            )
            / GIB,
            expert_parallel=work.expert_parallel,
            weight_bits=WEIGHT_BITS[model.weight_format],
            tensor_parallel_size=work.tensor_parallel_size,
        )
        if parallelisms is not None:
            parallelisms[key] = par
    ranks = RankBytes(
        stage_bytes(
            arch,
            kv_dtype,
            ctx,
            work.shared_prompt_tokens,
            par.tensor_parallel_size,
            par.pipeline_parallel_size,
        ),
        par.tensor_parallel_size,
        arch.uses_mla,
    )
    node_gpu_gb = gpu.marketed_memory_gb * work.gpus_per_node
    buffer_cap_gb = max_buffer_gb_per_node(
        platform, node_gpu_gb, host_memory_cap_gb(work.max_host_memory_gb, platform, node_gpu_gb)
    )
    nvme = nvme_tier(
        new_conversations_per_day=work.nvme_conversations_per_day,
        conversation_bytes=ranks.stored_conversation_bytes,
        max_drives=platform.nvme_bays,
    )
    unique_tokens = ctx - work.shared_prompt_tokens
    engine_conv = ranks.engine_conversation_bytes(work.serving_engine)
    replica = Replica(
        gpu=gpu.slug,
        tensor_parallel_size=par.tensor_parallel_size,
        gpus_per_replica=par.gpus_per_replica,
        replicas_per_node=par.replicas,
        nodes_per_group=par.pipeline_parallel_size,
        pool_tokens=_pool_tokens(par, unique_tokens),
        conversations=par.conversations_per_replica,
        kv_bytes_per_token=max(1, round(engine_conv / unique_tokens)),
        gpu_memory_gb_per_node=node_gpu_gb,
    )
    return MemoryLayout(
        gpu=gpu,
        platform=platform,
        kv_bytes_per_token=per_token,
        conversation_bytes=conv_bytes,
        shared_prompt_bytes=per_token * work.shared_prompt_tokens,
        parallelism=par,
        ranks=ranks,
        node_gpu_gb=node_gpu_gb,
        buffer_cap_gb=buffer_cap_gb,
        nvme=nvme,
        engine_conversation_bytes=engine_conv,
        replica=replica,
    )
