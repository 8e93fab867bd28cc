"""The GPU figure: replicas, tensor parallelism and the replicas the traffic needs
(``sizing.plan.layout_choice``, ``sizing.serving.replicas``)."""

from __future__ import annotations

import math

from configurator.inquiries.explain.words import Figure, Words
from sizing.model.experts import expert_weights_bytes
from sizing.plan.orchestrator import Plan
from sizing.units import GIB


def gpu_figure(plan: Plan, w: Words) -> Figure:
    """GPUs, nodes, replicas and the KV budget per card (``sizing.plan.layout_choice``,
    ``sizing.memory.gpu_budget``)."""
    _, num = w.gettext, w.num
    p = plan.parallelism
    rule = plan.request.rule
    values = {
        "util": num(rule.utilization, 2),
        "reported": num(plan.gpu.reported_gib, 2),
        "overhead": num(rule.overhead_gib, 1),
        "weights": num(plan.weights_gib, 1),
        "tp": num(p.tensor_parallel_size),
        "pp": num(p.pipeline_parallel_size),
        "budget": num(p.kv_cache_gib_per_gpu, 1),
        "gpus": num(p.gpus_per_replica),
    }
    if p.pipeline_parallel_size == 1:
        detail = w.ngettext(
            "%(gpus)s × %(name)s in %(nodes)s node, tensor parallel %(tp)s",
            "%(gpus)s × %(name)s in %(nodes)s nodes, tensor parallel %(tp)s",
            p.nodes,
        )
        budget = _(
            "KV cache per card = %(util)s × %(reported)s GiB − %(overhead)s GiB − "
            "%(weights)s GiB weights / %(tp)s = %(budget)s GiB"
        )
        stages: tuple[str, ...] = ()
    else:
        detail = _(
            "%(gpus)s × %(name)s in %(nodes)s nodes, tensor parallel %(tp)s × pipeline "
            "parallel %(pp)s"
        )
        budget = _(
            "KV cache per card = %(util)s × %(reported)s GiB − %(overhead)s GiB − "
            "%(weights)s GiB weights / (%(tp)s × %(pp)s) = %(budget)s GiB"
        )
        stages = (
            _(
                "pipeline parallel size %(pp)s: the weights fit no single node, so each "
                "replica spans %(pp)s nodes, one stage of its layers per node; GPUs per "
                "replica = %(tp)s × %(pp)s = %(gpus)s"
            )
            % values,
        )
    on_card: tuple[str, ...] = ()
    if p.expert_parallel_size > 1:
        budget, weights_step = _expert_parallel_weights(plan, w, values)
        on_card = (weights_step % values,)
    return Figure(
        key="gpus",
        label=_("GPUs, nodes and replicas"),
        value=_("%(replicas)s × %(gpus)s")
        % {
            "replicas": w.ngettext("%(n)s replica", "%(n)s replicas", p.total_replicas)
            % {"n": num(p.total_replicas)},
            "gpus": w.ngettext("%(n)s GPU", "%(n)s GPUs", p.gpus_per_replica)
            % {"n": num(p.gpus_per_replica)},
        },
        detail=detail
        % {
            "gpus": num(p.gpus),
            "name": plan.gpu.name,
            "nodes": num(p.nodes),
            "tp": num(p.tensor_parallel_size),
            "pp": num(p.pipeline_parallel_size),
        },
        steps=(
            budget % values,
            *on_card,
            (
                _(
                    "tensor parallel size: the smallest that holds the weights and one "
                    "full-length conversation; replicas per node = %(gpus)s / %(tp)s = "
                    "%(replicas)s"
                )
                if plan.request.workload.tensor_parallel_size is None
                else _(
                    "tensor parallel size: as given; replicas per node = %(gpus)s / %(tp)s = "
                    "%(replicas)s"
                )
            )
            % {
                "gpus": w.ngettext("%(n)s GPU", "%(n)s GPUs", plan.request.workload.gpus_per_node)
                % {"n": num(plan.request.workload.gpus_per_node)},
                "tp": num(p.tensor_parallel_size),
                "replicas": num(p.replicas),
            },
            *stages,
            *_scale_steps(plan, w),
        ),
        source=_(
            "our planning rule (0.9 × the memory the driver reports, vLLM's "
            "--gpu-memory-utilization default, less 3 GiB for CUDA graphs and activations); "
            "vLLM documentation, parallelism and scaling"
        ),
    )


def _expert_parallel_weights(plan: Plan, w: Words, values: dict[str, str]) -> tuple[str, str]:
    """The templates of an expert-parallel plan's KV budget step and of the step that adds
    up the weights on one card (the routed experts over EP, the other weights over TP:
    ``sizing.memory.gpu_budget.weights_per_gpu_gib``); adds the numbers they quote to ``values``."""
    _, num = w.gettext, w.num
    model = plan.request.model
    experts_gib = expert_weights_bytes(model.config, model.weight_format, model.weights_bytes) / GIB
    p = plan.parallelism
    values["ep"] = num(p.expert_parallel_size)
    values["on_card"] = num(p.weights_gib_per_gpu, 1)
    values["experts"] = num(experts_gib, 1)
    values["other"] = num(plan.weights_gib - experts_gib, 1)
    budget = _(
        "KV cache per card = %(util)s × %(reported)s GiB − %(overhead)s GiB − "
        "%(on_card)s GiB weights on the card = %(budget)s GiB"
    )
    if p.pipeline_parallel_size == 1:
        return budget, _(
            "weights on a card = %(experts)s GiB of routed experts / EP %(ep)s + "
            "%(other)s GiB of other weights / TP %(tp)s = %(on_card)s GiB"
        )
    return budget, _(
        "weights on a card = (%(experts)s GiB of routed experts / EP %(ep)s + "
        "%(other)s GiB of other weights / TP %(tp)s) / PP %(pp)s = %(on_card)s GiB"
    )


def _scale_steps(plan: Plan, w: Words) -> list[str]:
    """How traffic sets the replicas and nodes (``sizing.serving.replicas.scale``,
    ``sizing.layout.cluster.plan_cluster``): the larger of what memory and compute need, on
    whole nodes; empty without traffic."""
    _, num = w.gettext, w.num
    serving = plan.serving
    if serving is None:
        return []
    scale, cluster = serving.scale, serving.cluster
    compute = scale.replicas_for_compute
    needed = max(scale.replicas_for_memory, compute or 0)
    if compute is None:
        need = _("replicas: %(memory)s for memory; no replica count meets the targets") % {
            "memory": num(scale.replicas_for_memory)
        }
    else:
        need = _(
            "replicas needed = max(%(memory)s for memory, %(compute)s for the load) = %(needed)s"
        ) % {
            "memory": num(scale.replicas_for_memory),
            "compute": num(compute),
            "needed": num(needed),
        }
    groups = cluster.nodes // cluster.pipeline_nodes
    values = {
        "needed": num(needed),
        "per_node": num(cluster.replicas_per_node),
        "pp": num(cluster.pipeline_nodes),
        "nodes": num(cluster.nodes),
        "groups": num(groups),
        "replicas": num(cluster.replicas),
    }
    if math.ceil(needed / cluster.replicas_per_node) != groups:
        nodes = _(
            "nodes: %(nodes)s, the fewest the plan allows; replicas = %(groups)s × "
            "%(per_node)s per node = %(replicas)s"
        )
    elif cluster.pipeline_nodes == 1:
        nodes = _(
            "nodes = ⌈%(needed)s / %(per_node)s replicas per node⌉ = %(nodes)s; "
            "replicas = %(nodes)s × %(per_node)s = %(replicas)s"
        )
    else:
        nodes = _(
            "nodes = ⌈%(needed)s / %(per_node)s replicas per node⌉ × %(pp)s nodes per "
            "replica = %(nodes)s; replicas = %(groups)s × %(per_node)s = %(replicas)s"
        )
    return [need, nodes % values]
