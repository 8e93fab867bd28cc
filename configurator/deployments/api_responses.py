"""The JSON API's answers: a plan and a recommendation (its errors:
:mod:`configurator.deployments.api_errors`)."""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema
from pydantic import create_model

from sizing.search.space import LAYOUT_FIELDS
from sizing.workload import INPUTS


class PlanOut(Schema):
    """The plan's stable JSON contract (keys as in ``docs/cli.md``)."""

    summary: dict[str, Any]


def _layout_fields() -> dict[str, Any]:
    """The schema fields of a configuration's layout: one per field of
    :data:`~sizing.search.space.LAYOUT_FIELDS`, typed and described as the
    :class:`~sizing.workload.Workload` field is declared."""
    return {
        name: (
            INPUTS[name].kind | None if INPUTS[name].optional else INPUTS[name].kind,
            Field(..., description=INPUTS[name].help),
        )
        for name in LAYOUT_FIELDS
    }


ConfigurationLayout = create_model(
    "ConfigurationLayout",
    __base__=Schema,
    __doc__="The layout searched, as the workload's fields that size it again.",
    **_layout_fields(),
)


class ConfigurationOut(ConfigurationLayout):  # type: ignore[misc, valid-type]
    """One recommended configuration (keys as in ``docs/cli.md``, ``recommend``)."""

    tensor_parallel_size: int = Field(..., description="tensor parallel size of an instance")
    gpu_name: str
    nodes: int
    replicas: int
    host_memory_gb: int
    dimm_count: int
    dimm_gb: int
    cpu_tier_gib: float
    conversations_on_gpus: int
    nvme_tb: float
    nvme_drive_count: int
    shared_tier_tb: float
    ttft_p95_ms: float | None
    tpot_ms: float | None
    cpu_hit_rate: float | None
    price_net_eur: str = Field(..., description="net list price, EUR, two decimals")
    relative_cost: float = Field(..., description="price over the cheapest one's")
    ttft_p95_target_ms: float = Field(..., description="the customer's TTFT p95 target, ms")
    tpot_target_ms: float = Field(..., description="the customer's TPOT target, ms")
    meets_targets: bool = Field(..., description="TTFT p95 and TPOT within those targets")
    why: str
    why_codes: list[dict[str, Any]]


class DramTradeOut(Schema):
    """The cheapest configuration with a CPU tier against the cheapest without one."""

    with_cpu_tier: ConfigurationOut | None
    without_cpu_tier: ConfigurationOut | None
    saving_eur: str | None


class RelaxedTargetsOut(Schema):
    """One relaxed latency target for all configurations; null for a target kept."""

    ttft_p95_ms: float | None
    tpot_ms: float | None


class RecommendationOut(Schema):
    """The cheapest configurations, the Pareto front, and why."""

    configurations: list[ConfigurationOut]
    pareto: list[ConfigurationOut]
    pareto_axis: str
    reference: ConfigurationOut | None
    binding: str | None = Field(None, description="what binds when nothing meets the workload")
    binding_text: str | None = Field(
        None, description="what binds, in the customer's words (e.g. a target with its value)"
    )
    nearest: ConfigurationOut | None
    relaxed_targets: RelaxedTargetsOut | None = Field(
        None,
        description="when no configuration can meet a latency target, the one target "
        "every configuration listed is sized for (null: the customer's)",
    )
    relaxed_text: str | None = Field(None, description="the same, as a sentence")
    dram_instead_of_gpus: DramTradeOut
    evaluated: int
    priced_on: str
