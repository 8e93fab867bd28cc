"""The orchestrator: a sizing request in, a complete plan out.

It composes the concept modules in order: the part the users leave alone
(``plan_layout``: KV geometry, weights, GPU budget and parallelism, each node's buffer
limit and first NVMe tier), the traffic and each node's NVMe share (``plan_traffic``),
CPU tier and host memory (``host_memory``), reload versus recompute (``transfer``),
the verdict (``verdict``) and the vLLM buffer (``vllm_buffer``). It imports no
engine module: the engines' files are written from a plan (``sizing.engines``), and its
JSON summary is :func:`sizing.summary.plan_summary`. Every rule's source
is in the docstring of the module that applies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sizing.hardware.catalog import Gpu, Platform
from sizing.memory.gpu_budget import BudgetRule
from sizing.memory.host_memory import CpuTier, HostMemory, cpu_tier, host_memory
from sizing.memory.nvme import NvmeTier, nvme_tier
from sizing.memory.residency import Placement, placement
from sizing.memory.vllm_buffer import VllmOffload, offload
from sizing.model.experts import routed_experts
from sizing.model.spec import ModelSpec
from sizing.performance import NEW_TOKENS_PER_TURN
from sizing.performance.hit_value import TransferEstimate
from sizing.plan.layout_choice import Parallelism
from sizing.plan.memo import PlanMemo, transfer_estimate
from sizing.plan.under_traffic import nvme_per_node, serve_plan
from sizing.serving.benefit import with_benefit
from sizing.serving.serve import Serving
from sizing.traffic.profile import Traffic
from sizing.units import GB, GIB
from sizing.verdict import Note, Verdict, decide, restated, with_capped_tier, with_warning
from sizing.workload import Workload


@dataclass(frozen=True)
class PlanRequest:
    """A workload with its model resolved: what :func:`make_plan` sizes.

    Attributes:
        model: the model to serve (resolved from ``workload.model`` or a private config).
        workload: the customer's inputs (:class:`sizing.workload.Workload`).
        platform_slug: the server platform.
        rule: the GPU budget rule (seed defaults).
    """

    model: ModelSpec
    workload: Workload
    platform_slug: str = "epyc-9005-2s"
    rule: BudgetRule = field(default_factory=BudgetRule)

    @property
    def traffic(self) -> Traffic:
        """The workload's turns, time between turns, tokens per turn, busy hour and
        latency targets (:class:`~sizing.traffic.profile.Traffic`; defaults stated there)."""
        return self.workload.traffic


@dataclass(frozen=True)
class Plan:
    """The sizing plan for one request. Memory figures are for one node; the plan has
    :attr:`Parallelism.nodes` identical nodes.

    ``serving`` holds the plan under traffic (hit rates, TTFT p95, TPOT, nodes, shared
    tier); ``None`` when the performance model has no measured basis for the GPU, and
    then the plan is sized for memory only (``serving_note`` says why).
    """

    request: PlanRequest
    gpu: Gpu
    platform: Platform
    kv_bytes_per_token: int
    conversation_bytes: int
    parallelism: Parallelism
    cpu_tier: CpuTier
    host: HostMemory
    nvme: NvmeTier
    transfer: TransferEstimate
    verdict: Verdict
    vllm_offload: VllmOffload | None
    shared_prompt_bytes: int = 0
    serving: Serving | None = None
    serving_note: str = ""

    @property
    def conversation_gib(self) -> float:
        """One full-length conversation, whole model, GiB."""
        return self.conversation_bytes / GIB

    @property
    def unique_conversation_bytes(self) -> int:
        """One conversation without the shared system prompt, whole model, bytes."""
        return self.conversation_bytes - self.shared_prompt_bytes

    @property
    def active_users_fit(self) -> bool:
        """Whether the users active at once are all resident on the GPUs (True if not given)."""
        active = self.request.workload.active_users
        return active is None or active <= self.parallelism.conversations_on_gpus

    @property
    def weights_gib(self) -> float:
        """The model's weights, GiB."""
        return self.request.model.weights_bytes / GIB

    @property
    def resting_conversations(self) -> int:
        """Users beyond what the GPUs hold (never negative)."""
        return max(0, self.request.workload.users - self.parallelism.conversations_on_gpus)

    @property
    def placement(self) -> Placement:
        """Where the users' conversations rest (:func:`sizing.memory.residency.placement`)."""
        return placement(
            users=self.request.workload.users,
            conversations_on_gpus=self.parallelism.conversations_on_gpus,
            cpu_tier_gib=self.cpu_tier.total_gib,
            nvme_sized=self.nvme.drive is not None,
            new_conversations_per_day=self.request.workload.nvme_conversations_per_day,
            cpu_tier_conversations=(
                self.cpu_tier.conversations_per_instance * self.parallelism.total_replicas
            ),
            shared_tier_sized=self.serving is not None and self.serving.shared is not None,
            nvme_conversations=self.nvme.conversations_per_node * self.parallelism.nodes,
        )


def validate(request: PlanRequest) -> None:
    """Check the request's numbers before any sizing (:meth:`Workload.validate` against
    the model's ``max_position_embeddings``).

    Raises:
        SizingError: naming the first :class:`Workload` field that is out of range.
    """
    request.workload.validate(
        model_limit_tokens=request.model.architecture.max_context_tokens,
        model_name=request.model.repo_id,
    )


def _capped(
    tier: CpuTier, bytes_per_node: float, par: Parallelism, conversation_bytes: int
) -> CpuTier:
    """The tier cut to what each node's slots hold, ``conversation_bytes`` a conversation
    in the serving engine's tier; the rest rests in the shared tier."""
    per_instance = bytes_per_node * par.nodes / par.total_replicas
    kept = int(per_instance // max(1, conversation_bytes))
    return replace(
        tier,
        total_gib=per_instance * par.total_replicas / GIB,
        per_instance_gib=per_instance / GIB,
        conversations_per_instance=min(tier.conversations_per_instance, kept),
    )


def make_plan(request: PlanRequest, memo: PlanMemo | None = None) -> Plan:
    """Size one node for ``request``.

    ``memo`` holds what the caller's other plans of one request or search computed
    (:class:`~sizing.plan.memo.PlanMemo`; a new one when not given): the plan is the
    same with or without it.

    Returns:
        The complete :class:`Plan`.

    Raises:
        SizingError: an input out of range or unknown (field named).
        InfeasibleError: no layout holds the weights and one conversation.
    """
    validate(request)
    work = request.workload
    model = request.model
    kv_dtype = work.kv_dtype
    memo = PlanMemo() if memo is None else memo
    models = memo.replica_models
    lay = memo.layout(model, work, request.platform_slug, request.rule)
    gpu, platform, par, ranks = lay.gpu, lay.platform, lay.parallelism, lay.ranks
    node_gpu_gb, buffer_cap_gb, nvme = lay.node_gpu_gb, lay.buffer_cap_gb, lay.nvme
    engine_conv, replica = lay.engine_conversation_bytes, lay.replica
    serving, serving_note = serve_plan(
        model, work, replica, buffer_cap_gb, nvme, replica_models=models
    )
    if serving is not None:
        serving, nvme = nvme_per_node(
            model, work, replica, buffer_cap_gb, nvme, serving, platform.nvme_bays, models
        )
        par = replace(par, nodes=serving.cluster.nodes)
    resting = max(0, work.users - par.conversations_on_gpus)
    # Distinct conversations the binding card's cache has room for (each rank holds its
    # share of every resident conversation, so this is the instance's figure).
    gpu_room = (
        (par.kv_cache_gib_per_gpu - par.shared_prefix_gib_per_gpu) / par.conversation_gib_per_gpu
        if par.conversation_gib_per_gpu > 0
        else 0.0
    )
    tier = cpu_tier(
        users=work.users,
        resting_conversations=resting,
        instances=par.total_replicas,
        ranks=ranks,
        gpu_conversation_capacity=gpu_room,
        engine=work.serving_engine,
    )
    if serving is not None and serving.cluster.cpu_tier_capped and tier.total_gib > 0:
        tier = _capped(tier, serving.cluster.cpu_tier_gb_per_node * GB, par, engine_conv)
    over = tier.total_gib * GIB / GB > buffer_cap_gb * par.nodes + 1e-6
    if over and work.max_host_memory_gb is not None:
        # A node holds no more than the customer's limit beside the reserve, whatever the
        # traffic model's per-token estimate of the tier made of it. Without a limit a
        # tier beyond the slots is refused by host_memory() below, naming the slots.
        tier = _capped(tier, buffer_cap_gb * GB, par, engine_conv)
    host = host_memory(
        platform=platform,
        gpu_memory_gb_total=node_gpu_gb,
        buffer_gb=tier.total_gib * GIB / GB / par.nodes,
        kv_cache_is_fp8=kv_dtype == "fp8",
        unmeasured_gpu=gpu.name if serving is None else "",
    )
    # A hit prefills what the serving model prefills on a return: the previous answer and
    # the new prompt of the plan's traffic (sizing.serving.load).
    turn = serving.shape if serving is not None else None
    new_tokens = turn.new_prompt_tokens + turn.output_tokens if turn else NEW_TOKENS_PER_TURN
    transfer = transfer_estimate(
        model,
        kv_dtype,
        gpu.slug,
        par.tensor_parallel_size,
        work.context_tokens,
        work.shared_prompt_tokens,
        new_tokens,
    )
    verdict = decide(
        users=work.users,
        conversations_on_gpus=par.conversations_on_gpus,
        reload_ms=transfer.cpu_hit_ms,
        recompute_ms=transfer.miss_ms,
        unmeasured_gpu=gpu.name if transfer.no_basis else "",
        tier_exceeds_gpu_cache=tier.exceeds_gpu_cache,
        nvme_lifetime_years=nvme.lifetime_years,
        nvme_top_rated=nvme.top_rated_drives,
        nvme_capped_at=(
            (nvme.drive_count, nvme.capacity_tb, nvme.capacity_needed_tb) if nvme.capped else None
        ),
        active_users=work.active_users,
        kv_cache_is_fp8=kv_dtype == "fp8",
    )
    if serving is not None:
        verdict = with_benefit(verdict, serving.benefit, serving.target_notes)
    elif serving_note != transfer.no_basis:
        # The same missing measurement is the verdict's reason already (no_measured_basis):
        # the plan says it once.
        verdict = with_warning(verdict, Note("traffic_unmeasured", (("what", serving_note),)))
    if work.expert_parallel and not routed_experts(model.config):
        # Asked for on a dense model: sized without it (sizing.plan.layout_choice), and said so.
        verdict = with_warning(verdict, Note("no_experts", (("model", model.repo_id),)))
    if not verdict.offload_pays or work.without_cpu_tier:
        # Sell no memory the customer does not need: no tier, no buffer, no NVMe; the
        # GPUs are those the targets need without a tier.
        if serving is not None:
            plain, _ = serve_plan(
                model, work, replica, buffer_cap_gb, nvme, tiers=False, replica_models=models
            )
            if plain is not None:
                # A verdict against a tier keeps what the tier would have bought; a plan
                # asked without one states its own figures.
                serving = (
                    plain if work.without_cpu_tier else replace(plain, benefit=serving.benefit)
                )
                par = replace(par, nodes=serving.cluster.nodes)
                verdict = restated(verdict, par.conversations_on_gpus)
        tier = cpu_tier(
            users=work.users,
            resting_conversations=0,
            instances=par.total_replicas,
            ranks=ranks,
            gpu_conversation_capacity=gpu_room,
        )
        host = host_memory(platform=platform, gpu_memory_gb_total=node_gpu_gb, buffer_gb=0.0)
        nvme = nvme_tier(
            new_conversations_per_day=0, conversation_bytes=ranks.stored_conversation_bytes
        )
    if work.without_cpu_tier:
        # Asked for: the plan without a CPU tier (the counterfactual a saving is sized on,
        # sizing.search.cheapest). It sells none, so its verdict is that, not what a tier
        # would have bought; the warnings of the plan it is stay.
        verdict = replace(verdict, offload_pays=False, reason_notes=(Note("without_cpu_tier"),))
    in_tier = tier.conversations_per_instance
    buffer = offload(ranks.vllm_native_bytes(in_tier) / GIB if in_tier else 0.0)
    plan = Plan(
        request=request,
        gpu=gpu,
        platform=platform,
        kv_bytes_per_token=lay.kv_bytes_per_token,
        conversation_bytes=lay.conversation_bytes,
        parallelism=par,
        cpu_tier=tier,
        host=host,
        nvme=nvme,
        transfer=transfer,
        verdict=verdict,
        vllm_offload=buffer,
        shared_prompt_bytes=lay.shared_prompt_bytes,
        serving=serving,
        serving_note=serving_note,
    )
    if serving is None and tier.total_gib > 0 and (where := plan.placement).recomputed:
        # Without the traffic model no hit rate shows the misses a cut tier leaves.
        capped = with_capped_tier(
            verdict, kept=where.in_cpu_tier, resting=resting, recomputed=where.recomputed
        )
        plan = replace(plan, verdict=capped)
    return plan
