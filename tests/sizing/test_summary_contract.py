"""The ``size`` JSON contract: ``docs/cli.md`` documents exactly the keys of
:class:`sizing.summary.PlanSummary`, and the summary of a real plan has exactly those
keys with values of the declared kinds."""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.summary import PlanSummary, plan_summary
from tests.factories import seed_workload

CLI_MD = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def documented_keys() -> list[str]:
    """The keys named in the first column of the table under "The JSON contract"."""
    text = CLI_MD.read_text(encoding="utf-8")
    section = text.split("### The JSON contract", 1)[1].split("\n## ", 1)[0]
    keys: list[str] = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        keys += re.findall(r"`([a-z0-9_]+)`", first_cell)
    return keys


def test_docs_name_every_key_of_the_type_once() -> None:
    keys = documented_keys()
    assert len(keys) == len(set(keys)), "a key documented twice"
    assert set(keys) == set(PlanSummary.__annotations__)


def test_a_real_summary_has_the_typed_keys_and_kinds() -> None:
    # The seed example (docs/sizing.md) and a GPU without a measured basis (the L40S has no
    # prefill class in sizing/data/performance.json: traffic keys are null).
    seed = seed_workload()
    hints = typing.get_type_hints(PlanSummary)
    for work in (seed, seed.replace(gpu="l40s")):
        s = plan_summary(make_plan(PlanRequest(model=from_catalog(work.model), workload=work)))
        assert list(s) == [k for k in s if k in hints] and set(s) == set(hints)
        for key, value in s.items():
            assert _fits(value, hints[key]), (key, value, hints[key])


def _fits(value: object, hint: object) -> bool:
    """Whether ``value`` is of the declared type (unions, lists, dicts, TypedDicts)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        k, v = typing.get_args(hint)
        return isinstance(value, dict) and all(
            _fits(a, k) and _fits(b, v) for a, b in value.items()
        )
    if typing.is_typeddict(hint):
        sub = typing.get_type_hints(hint)
        return (
            isinstance(value, dict)
            and set(value) == set(sub)
            and all(_fits(value[n], sub[n]) for n in sub)
        )
    assert isinstance(hint, type)
    return isinstance(value, hint) and not (hint is int and isinstance(value, bool))
