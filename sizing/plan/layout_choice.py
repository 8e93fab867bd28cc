"""The parallelism plan: TP, PP, EP, replicas and nodes.

The KV budget of one card after its weights is :mod:`sizing.memory.gpu_budget`'s (the seed's
planning rule), one conversation's cache on one card of each pipeline stage
:mod:`sizing.memory.stage_cache`'s. The engine's pool is the smallest of its stages' pools, so
the stage with the most cache binds.

Valid TP sizes follow vLLM (``ModelConfig.verify_with_parallel_config``): TP divides the
attention heads, and TP and the KV heads divide one another.

Choice (the seed's layout, in order):

1. one node; the smallest TP at which the weights and one max-length conversation fit,
   the other GPUs become replicas ("4 replicas × 1 GPU"). Smaller TP means more
   replicas and no all-reduce traffic. Users beyond the node's GPU capacity rest in the
   CPU tier (seed: 296 of 500 rest); the plan never adds nodes for them;
2. only when the weights do not fit in one node at the largest TP: pipeline parallel
   over 2, 3, … nodes (one stage per node, at most :data:`MAX_PIPELINE_NODES`), the
   smallest TP that then fits;
3. never a layout whose pool cannot hold one max-length request (vLLM refuses to
   start); otherwise :class:`~sizing.errors.InfeasibleError` names the binding
   constraint and what would fix it.

A tensor parallel size the customer gives replaces the search over TP sizes: it must
be valid (vLLM's rule above), pipeline parallel is used with it only where the weights
fit no single node at all, and a given TP that cannot hold one request is an error on
``tensor_parallel_size``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.errors import Fix, InfeasibleError, SizingError, gettext_noop
from sizing.hardware.catalog import Gpu
from sizing.layout.parallelism import Parallelism as Parallelism
from sizing.memory.gpu_budget import BudgetRule, kv_budget_per_gpu_gib, weights_per_gpu_gib
from sizing.memory.stage_cache import ConversationShape, LayerSums, layer_sums, stage_cache_gib
from sizing.model.architecture import Architecture

MAX_PIPELINE_NODES = 8
"""Most nodes one pipeline-parallel replica spans in a plan."""


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


@dataclass(frozen=True)
class _Candidate:
    tp: int
    pp: int
    ep: int
    weights_gib: float
    budget_gib: float
    unique_gib: float
    prefix_gib: float
    per_replica: int


def _evaluate(
    *,
    arch: Architecture,
    gpu: Gpu,
    work: ConversationShape,
    weights_gib: float,
    expert_weights_gib: float,
    rule: BudgetRule,
    tp: int,
    pp: int,
    ep: int,
    sums: LayerSums,
) -> _Candidate:
    on_gpu = weights_per_gpu_gib(
        weights_gib=weights_gib, expert_weights_gib=expert_weights_gib, tp=tp, pp=pp, ep=ep
    )
    budget = kv_budget_per_gpu_gib(gpu, on_gpu, rule)
    stages = stage_cache_gib(sums, arch.num_layers, pp)
    per_replica = math.inf
    unique_bind, prefix_bind = stages[0]
    for unique, prefix in stages:
        if unique <= 0:
            continue
        fits = math.floor((budget - prefix) / unique + 1e-9) if budget > 0 else 0
        if fits < per_replica:
            per_replica, unique_bind, prefix_bind = fits, unique, prefix
    count = 0 if per_replica is math.inf or budget <= 0 else max(0, int(per_replica))
    return _Candidate(tp, pp, ep, on_gpu, budget, unique_bind, prefix_bind, count)


def _parallelism(c: _Candidate, gpus_per_node: int) -> Parallelism:
    return Parallelism(
        tensor_parallel_size=c.tp,
        replicas=gpus_per_node // c.tp,
        nodes=c.pp,
        kv_cache_gib_per_gpu=c.budget_gib,
        conversations_per_replica=c.per_replica,
        pipeline_parallel_size=c.pp,
        expert_parallel_size=c.ep,
        weights_gib_per_gpu=c.weights_gib,
        conversation_gib_per_gpu=c.unique_gib,
        shared_prefix_gib_per_gpu=c.prefix_gib,
    )


def choose_parallelism(
    *,
    arch: Architecture,
    gpu: Gpu,
    gpus_per_node: int,
    weights_gib: float,
    work: ConversationShape,
    rule: BudgetRule,
    expert_weights_gib: float = 0.0,
    expert_parallel: bool = False,
    weight_bits: float = 16.0,
    tensor_parallel_size: int | None = None,
) -> Parallelism:
    """Pick the layout by the rule of the module docstring.

    Args:
        arch: model geometry.
        gpu: the card.
        gpus_per_node: GPUs in one node.
        weights_gib: the whole model's weights, GiB.
        work: KV dtype, context and shared prefix of one conversation.
        rule: the budget rule.
        expert_weights_gib: the routed experts' share of ``weights_gib``, GiB.
        expert_parallel: spread the experts over all GPUs of the node (vLLM
            ``--enable-expert-parallel``); only for MoE models.
        weight_bits: bits per weight of the checkpoint (to suggest FP8 or 4-bit).
        tensor_parallel_size: the TP the customer gave (``None``: the rule chooses);
            only this size is tried, and pipeline parallel only where the weights fit
            no single node at any valid TP.

    Raises:
        SizingError: on field ``tensor_parallel_size`` when the given TP is not valid for
            the model and node (vLLM's divisibility rule).
        InfeasibleError: naming the binding constraint and what would fix it; on field
            ``tensor_parallel_size`` when the given TP cannot hold one request.
    """
    sizes = valid_tp_sizes(arch, gpus_per_node)
    if not sizes:
        raise InfeasibleError(
            "gpus_per_node",
            template=gettext_noop(
                "no tensor parallel size fits %(gpus)s GPUs: the model's %(heads)s attention "
                "heads and %(kv_heads)s KV heads allow none of them"
            ),
            binding="tensor parallel divisibility",
            fixes=(Fix("gpus_divide_heads"),),
            code="tp_none_fits",
            values={
                "gpus": gpus_per_node,
                "heads": arch.num_attention_heads,
                "kv_heads": arch.num_kv_heads,
            },
        )
    if tensor_parallel_size is not None and tensor_parallel_size not in sizes:
        valid = ", ".join(str(s) for s in sizes)
        raise SizingError(
            "tensor_parallel_size",
            template=gettext_noop(
                "tensor parallel %(tp)s does not fit %(gpus)s GPUs and the model's %(heads)s "
                "attention heads and %(kv_heads)s KV heads; valid sizes: %(valid)s"
            ),
            code="tp_invalid",
            values={
                "tp": tensor_parallel_size,
                "gpus": gpus_per_node,
                "heads": arch.num_attention_heads,
                "kv_heads": arch.num_kv_heads,
                "valid": valid,
            },
        )
    ep = gpus_per_node if expert_parallel and expert_weights_gib > 0 else 1
    sums_by_tp: dict[int, LayerSums] = {}

    def evaluate(tp: int, pp: int) -> _Candidate:
        sums = sums_by_tp.get(tp)
        if sums is None:
            sums = sums_by_tp[tp] = layer_sums(arch, work, tp)
        return _evaluate(
            arch=arch,
            gpu=gpu,
            work=work,
            weights_gib=weights_gib,
            expert_weights_gib=expert_weights_gib,
            rule=rule,
            tp=tp,
            pp=pp,
            ep=ep,
            sums=sums,
        )

    tps = sizes if tensor_parallel_size is None else [tensor_parallel_size]
    for tp in tps:
        cand = evaluate(tp, 1)
        if cand.per_replica >= 1:
            return _parallelism(cand, gpus_per_node)
    widest = evaluate(sizes[-1], 1)
    if widest.budget_gib > 0:
        # One node holds the weights: the widest valid TP, or the given one, is too small.
        # Pipeline stages over nodes are planned only for weights that do not fit one
        # node, so the refusal suggests no second node.
        failed = widest if tensor_parallel_size is None else evaluate(tps[0], 1)
        if failed.budget_gib <= 0:
            error = _weights_infeasible(failed, gpu, gpus_per_node, weights_gib, weight_bits, rule)
        else:
            error = _conversation_infeasible(failed, gpu, gpus_per_node, work, weight_bits)
        raise _given_tp(error) if tensor_parallel_size is not None else error
    for pp in range(2, min(MAX_PIPELINE_NODES, arch.num_layers) + 1):
        for tp in tps:
            cand = evaluate(tp, pp)
            if cand.per_replica >= 1:
                return _parallelism(cand, gpus_per_node)
    error = _weights_infeasible(widest, gpu, gpus_per_node, weights_gib, weight_bits, rule)
    raise _given_tp(error) if tensor_parallel_size is not None else error


def _given_tp(error: InfeasibleError) -> InfeasibleError:
    """``error`` on the field ``tensor_parallel_size``, first suggesting to let the plan
    choose the size."""
    return InfeasibleError(
        "tensor_parallel_size",
        template=error.template,
        binding=error.binding,
        fixes=(Fix("plan_chooses_tp"), *error.fix_notes),
        code=error.code,
        values=dict(error.values),
    )


def _conversation_infeasible(
    c: _Candidate,
    gpu: Gpu,
    gpus_per_node: int,
    work: ConversationShape,
    weight_bits: float,
) -> InfeasibleError:
    need = c.unique_gib + c.prefix_gib
    # The conversation's cache grows about linearly with the context (growing layers).
    longest = int(work.context_tokens * c.budget_gib / need) if need > 0 else 0
    fixes = [Fix("context_at_most", (("tokens", longest),))]
    if work.kv_dtype != "fp8":
        fixes.append(Fix("fp8_kv_cache"))
    if weight_bits > 8:
        fixes.append(Fix("fp8_or_4bit_weights"))
    fixes += [Fix("more_gpus_tp"), Fix("larger_gpu")]
    return InfeasibleError(
        "context_tokens",
        template=gettext_noop(
            "one conversation needs %(need_gib)s GiB per GPU at tensor parallel %(tp)s, but "
            "only %(budget_gib)s GiB per %(gpu)s is left for the KV cache after "
            "%(weights_gib)s GiB of weights on each of %(gpus)s GPUs"
        ),
        binding="one max-length conversation does not fit",
        fixes=tuple(fixes),
        code="conversation_does_not_fit",
        values={
            "need_gib": round(need, 2),
            "tp": c.tp,
            "budget_gib": round(c.budget_gib, 2),
            "gpu": gpu.name,
            "weights_gib": round(c.weights_gib, 1),
            "gpus": gpus_per_node,
        },
    )


def _weights_infeasible(
    c: _Candidate,
    gpu: Gpu,
    gpus_per_node: int,
    weights_gib: float,
    weight_bits: float,
    rule: BudgetRule,
) -> InfeasibleError:
    usable = rule.utilization * gpu.reported_gib - rule.overhead_gib
    fixes = []
    if weight_bits > 8:
        fixes.append(Fix("fp8_weights"))
    if weight_bits > 4.5:
        fixes.append(Fix("four_bit_weights"))
    fixes += [Fix("more_gpus"), Fix("larger_gpu")]
    return InfeasibleError(
        "gpus_per_node",
        template=gettext_noop(
            "the weights (%(weights_gib)s GiB) do not fit on %(gpus)s × %(gpu)s: "
            "%(per_gpu_gib)s GiB per GPU at tensor parallel %(tp)s against %(usable_gib)s GiB "
            "usable, and not over %(nodes)s nodes with pipeline parallel either"
        ),
        binding="weights do not fit at this TP",
        fixes=tuple(fixes),
        code="weights_do_not_fit",
        values={
            "weights_gib": round(weights_gib, 1),
            "gpus": gpus_per_node,
            "gpu": gpu.name,
            "per_gpu_gib": round(c.weights_gib, 1),
            "tp": c.tp,
            "usable_gib": round(usable, 1),
            "nodes": MAX_PIPELINE_NODES,
        },
    )
