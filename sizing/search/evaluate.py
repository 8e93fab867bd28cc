"""One configuration of the search (:mod:`sizing.search.cheapest`) sized, checked against the hard
constraints and priced.

Hard constraints (a configuration breaking one is never returned by the search, only
counted in :attr:`sizing.search.cheapest.Recommendation.rejected`): the plan cannot be made
(weights or one max-length conversation do not fit, host memory beyond the largest
DIMMs, TP divisibility); the BOM does not fit the chassis (the GPU's cooling, GPU slots,
DIMM slots, NVMe bays: a GPU no chassis takes, such as the flow-through RTX PRO 6000
Workstation Edition, is rejected before it is sized,
:func:`sizing.hardware.chassis.check_gpu_cooling`); the CPU tier would only mirror the GPU cache
(verdict binding "mirror"). Targets (a configuration that misses one is kept as
"nearest" but not recommended): the users active at once are resident on the GPUs
(``active_share``), and TTFT p95 and TPOT at the busiest hour within the workload's
targets (the plan under traffic, ``plan.serving``). A configuration whose GPU has no
measured basis for the TTFT is not recommended either: whether it meets the target
would be a guess (``sizing.performance``).
"""

from __future__ import annotations

from sizing.bom.lines import bill_of_materials
from sizing.errors import InfeasibleError, SizingError
from sizing.plan.memo import PlanMemo
from sizing.plan.orchestrator import Plan, PlanRequest, make_plan
from sizing.search.configuration import Configuration, Miss, P, PriceFn, Rejection
from sizing.search.nearest import NO_BASIS, TPOT_TARGET, TTFT_TARGET
from sizing.verdict import BINDING


def misses(
    plan: Plan, *, ttft_p95_ms: float | None = None, tpot_ms: float | None = None
) -> tuple[Miss, ...]:
    """The targets ``plan`` misses: the users active at once resident on the GPUs, and
    the TTFT p95 and TPOT targets at the busiest hour (``plan.serving``): the customer's
    targets of the plan's workload, or ``ttft_p95_ms`` and ``tpot_ms`` (ms) where given,
    never the relaxed targets a plan may be sized for
    (:func:`sizing.serving.targets.targets`)."""
    out = []
    active = plan.request.workload.active_users
    on_gpus = plan.parallelism.conversations_on_gpus
    if active is not None and active > on_gpus:
        out.append(Miss(BINDING["active"], on_gpus, active, (active - on_gpus) / active))
    serving = plan.serving
    if serving is not None:
        load = serving.final.load
        for target, value, limit in (
            (TTFT_TARGET, load.ttft_p95_ms, ttft_p95_ms or serving.ttft_p95_target_ms),
            (TPOT_TARGET, load.tpot_ms, tpot_ms or serving.tpot_target_ms),
        ):
            if value > limit:
                out.append(Miss(target, float(value), float(limit), (value - limit) / limit))
    return tuple(out)


def evaluate(
    request: PlanRequest,
    price: PriceFn[P],
    plan: Plan | None = None,
    memo: PlanMemo | None = None,
) -> Configuration[P] | Rejection | None:
    """Size, check and price one configuration; ``plan`` is ``make_plan(request)`` when
    the caller has made it already (it is not made again), ``memo`` what the search's
    other plans computed (:class:`~sizing.plan.memo.PlanMemo`).

    Returns:
        A :class:`Configuration`; a :class:`Rejection` naming the hard constraint it
        breaks (module docstring); ``None`` when ``price`` cannot price its BOM.
    """
    try:
        plan = make_plan(request, memo) if plan is None else plan
        bom = bill_of_materials(plan)
    except InfeasibleError as exc:
        return rejection(request, exc.binding, exc.message)
    except SizingError as exc:
        return rejection(request, exc.field, exc.message)
    if plan.cpu_tier.total_gib > 0 and not plan.cpu_tier.exceeds_gpu_cache:
        return rejection(request, BINDING["mirror"], plan.verdict.warnings[-1])
    if plan.serving_note and plan.serving is None:
        return rejection(request, NO_BASIS, plan.serving_note)
    amount = price(bom)
    if amount is None:
        return None
    return Configuration(plan=plan, bom=bom, price=amount, misses=misses(plan))


def rejection(request: PlanRequest, binding: str, message: str) -> Rejection:
    """The :class:`~sizing.search.configuration.Rejection` of ``request``'s layout: the hard
    constraint ``binding`` it breaks and the message saying how."""
    w = request.workload
    return Rejection(
        w.gpu,
        w.gpus_per_node,
        w.kv_dtype,
        w.nvme_conversations_per_day,
        binding,
        message,
    )
