"""Workflows around the sizing engine: resolve the model, then plan."""

from __future__ import annotations

from configurator.modelhub.services import model_resolve
from sizing.model import ModelSpec
from sizing.plan import Plan, PlanRequest, make_plan


def plan_create(
    *,
    model_id: str,
    context_tokens: int,
    users: int,
    gpu_slug: str = "rtx-pro-6000-se",
    gpus_per_node: int = 4,
    kv_dtype: str = "fp8",
    new_conversations_per_day: int = 0,
    active_share: float | None = None,
    shared_prompt_tokens: int = 0,
    revision: str | None = None,
    model: ModelSpec | None = None,
) -> Plan:
    """Resolve ``model_id`` (unless ``model``, e.g. an uploaded config, is given) and
    size one node for the workload.

    Raises:
        sizing.errors.SizingError: naming the input that cannot be sized.
    """
    spec = model if model is not None else model_resolve(model_id, revision=revision)
    return make_plan(
        PlanRequest(
            model=spec,
            context_tokens=context_tokens,
            users=users,
            gpu_slug=gpu_slug,
            gpus_per_node=gpus_per_node,
            kv_dtype=kv_dtype,
            new_conversations_per_day=new_conversations_per_day,
            active_share=active_share,
            shared_prompt_tokens=shared_prompt_tokens,
        )
    )
