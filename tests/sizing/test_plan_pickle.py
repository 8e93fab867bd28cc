"""A plan pickles whole (the web side caches plans by pickling them): the plan read back
equals the plan, evaluates other replica counts alike, and names the catalog's own model
object instead of carrying its config."""

from __future__ import annotations

import pickle
from dataclasses import replace

from sizing.model.spec import from_catalog
from sizing.performance import model_shape
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import SEED_WORKLOAD


def test_a_pickled_plan_is_the_plan() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    plan = make_plan(PlanRequest(model=model, workload=SEED_WORKLOAD))
    again = pickle.loads(pickle.dumps(plan))
    assert again == plan and repr(again) == repr(plan)
    assert again.request.model is model
    assert again.transfer.shape is model_shape(model, SEED_WORKLOAD.kv_dtype)
    assert plan.serving is not None and plan.serving.evaluator is not None
    assert again.serving is not None and again.serving.evaluator is not None
    for replicas in (1, 2, 7):
        assert again.serving.evaluator(replicas) == plan.serving.evaluator(replicas)


def test_a_model_not_from_the_catalog_pickles_whole() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    upload = replace(model, source="uploaded config.json")
    again = pickle.loads(pickle.dumps(upload))
    assert again == upload and again is not upload
    assert again.config == model.config
