"""Workflows around the sizing engine: resolve the model, then plan a workload."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from configurator.modelhub.services import model_resolve
from configurator.modelhub.upload import model_from_config_upload
from sizing.model.spec import ModelSpec
from sizing.plan.orchestrator import Plan, PlanRequest, make_plan
from sizing.workload import Workload, model_source


def plan_create(
    workload: Workload,
    *,
    revision: str | None = None,
    model: ModelSpec | None = None,
    private_config: Mapping[str, Any] | None = None,
    private_weights_gib: float | None = None,
) -> Plan:
    """Resolve ``workload.model`` (:func:`model_spec`) and size one node for the workload.

    Raises:
        sizing.errors.SizingError: naming the input (a :class:`Workload` field) that
            cannot be sized.
    """
    spec = model_spec(
        model_id=workload.model,
        revision=revision,
        model=model,
        private_config=private_config,
        private_weights_gib=private_weights_gib,
    )
    return make_plan(PlanRequest(model=spec, workload=workload))


def plan_stored(inputs: Mapping[str, Any]) -> Plan:
    """Plan stored inputs (:func:`sizing.workload.stored_inputs`, or a row of an earlier
    schema that :meth:`Workload.from_json` reads).

    Raises:
        sizing.errors.SizingError: the stored inputs cannot be sized (any more).
    """
    config, weights = model_source(inputs)
    return plan_create(
        Workload.from_json(inputs), private_config=config, private_weights_gib=weights
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
    model's stored ``private_config`` (the uploaded ``config.json``, named ``model_id``,
    with ``private_weights_gib`` or the weights derived from the config); else the Hub
    model ``model_id`` at ``revision``.

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
