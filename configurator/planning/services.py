"""Workflows around the sizing engine: resolve the model, then plan."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from configurator.modelhub.services import model_resolve
from configurator.modelhub.upload import model_from_config_upload
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
    private_config: Mapping[str, Any] | None = None,
    private_weights_gib: float | None = None,
) -> Plan:
    """Resolve ``model_id`` and size one node for the workload.

    The model is ``model`` when given; else, for a private model, the spec built from
    its stored ``private_config`` (the uploaded ``config.json``, named ``model_id``, with
    ``private_weights_gib`` or the weights derived from the config); else the Hub model
    ``model_id``. All arguments but ``model`` are JSON-safe, so stored inputs re-plan.

    Raises:
        sizing.errors.SizingError: naming the input that cannot be sized.
    """
    spec = model_spec(
        model_id=model_id,
        revision=revision,
        model=model,
        private_config=private_config,
        private_weights_gib=private_weights_gib,
    )
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


def model_spec(
    *,
    model_id: str,
    revision: str | None = None,
    model: ModelSpec | None = None,
    private_config: Mapping[str, Any] | None = None,
    private_weights_gib: float | None = None,
) -> ModelSpec:
    """The model to size: ``model`` when given; else the spec built from a private
    model's stored ``private_config`` (named ``model_id``); else the Hub model.

    Raises:
        sizing.errors.SizingError: the model cannot be found or read.
    """
    if model is not None:
        return model
    if private_config is not None:
        return model_from_config_upload(
            config_text=json.dumps(private_config),
            model_name=model_id,
            weights_gib=private_weights_gib,
        )
    return model_resolve(model_id, revision=revision)
