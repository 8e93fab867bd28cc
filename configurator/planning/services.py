"""Workflows around the sizing engine: resolve the model, then plan a workload.

A plan is a pure function of the workload, the model (its name, config, weights and the
revision it was read at) and the engine's code and data, so it is cached under those in
Django's default cache (:func:`plan_key`): a repeated estimate is served from the cache
instead of being sized again. The cache is optional: when it refuses or fails, the
workload is sized as if nothing were cached (:func:`configurator.clients.fail_open`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from django.core.cache import cache

from configurator.clients import fail_open
from configurator.modelhub.services import model_resolve
from configurator.modelhub.upload import model_from_config_upload
from configurator.version import engine_digest
from sizing.model.spec import ModelSpec
from sizing.plan.orchestrator import Plan, PlanRequest, make_plan
from sizing.workload import Workload, model_source

PLAN_CACHE_SECONDS = 3600
"""How long a cached plan is served: an hour (a plan never goes stale within one build,
:func:`plan_key`; the bound only returns the cache's memory)."""


def plan_create(
    workload: Workload,
    *,
    revision: str | None = None,
    model: ModelSpec | None = None,
    private_config: Mapping[str, Any] | None = None,
    private_weights_gib: float | None = None,
) -> Plan:
    """Resolve ``workload.model`` (:func:`model_spec`) and size one node for the workload,
    or the plan cached under :func:`plan_key` when it was sized already.

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
    key = plan_key(workload, spec)
    plan: Plan | None = fail_open("plan cache", None, lambda: cache.get(key))
    if plan is None:
        plan = make_plan(PlanRequest(model=spec, workload=workload))
        fail_open("plan cache", None, lambda: cache.set(key, plan, PLAN_CACHE_SECONDS))
    return plan


def plan_key(workload: Workload, spec: ModelSpec) -> str:
    """The cache key of the plan of ``workload`` for the model ``spec``: a digest of the
    engine's files (:func:`configurator.version.engine_digest`), the workload's fields
    with their types (``repr``: an equal figure of another type may read differently),
    and the model's name, metadata source (the Hub revision it was read at, the catalog
    or an upload), weights and config.
    """
    config = json.dumps(spec.config, sort_keys=True, separators=(",", ":"), default=str)
    model = (spec.repo_id, spec.source, spec.weights_bytes, spec.weights_source)
    parts = (engine_digest(), repr(workload), *model, spec.weight_format, config)
    return "plan:" + hashlib.sha256(repr(parts).encode()).hexdigest()


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
