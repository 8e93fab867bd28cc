"""A model id typed in lower case is sized, stored and written under the Hub's canonical
id: the offline catalog's spelling (sizing/data/models.json: ``Qwen/Qwen3-32B-FP8``)."""

from __future__ import annotations

from typing import Any

import pytest

from configurator.deployments.services import bundle_files
from configurator.planning.services import plan_stored
from sizing.summary import plan_summary
from tests.quote_factories import SEED_INPUTS

pytestmark = pytest.mark.django_db

CANONICAL = "Qwen/Qwen3-32B-FP8"


def test_lowercase_id_is_planned_and_bundled_under_the_canonical_id(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    plan = plan_stored({**SEED_INPUTS, "model": CANONICAL.lower()})
    assert plan.request.model.repo_id == CANONICAL
    assert plan_summary(plan)["model"] == CANONICAL
    text = "\n".join(f.text for f in bundle_files(plan=plan))
    assert CANONICAL in text and CANONICAL.lower() not in text
