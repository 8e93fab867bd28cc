"""Every workload field through every interface gives the same plan.

The workload sets every field of ``sizing.workload.Workload`` away from its default:
Qwen3-30B-A3B (a MoE model, so expert parallelism counts) on 8 × H200 NVL, 16-bit cache,
8,192 tokens, 300 users, a quarter of them active, a 1,024-token shared prompt,
1,000 new conversations a day, tensor parallel 2 with expert parallel. The form, the
CLI and the API size it; the stored inquiry is quoted, the quote verified and its bundle
downloaded; each must come to the plan that ``make_plan`` gives directly.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from configurator.deployments.services import bundle_build
from configurator.inquiries import traffic_chart
from configurator.inquiries.forms import WorkloadForm
from configurator.inquiries.models import Inquiry
from configurator.quotes.services import quote_create_from_inquiry
from configurator.verification.services import plan_checks, verification_run
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, PlanRequest, make_plan
from sizing.summary import plan_summary
from sizing.workload import DEFAULT_GPU, FIELDS, SEED_WORKLOAD, Workload
from tests.quote_factories import make_presales

EVERY = Workload(
    model="Qwen/Qwen3-30B-A3B",
    context_tokens=8192,
    users=300,
    gpu="h200-nvl",
    gpus_per_node=8,
    kv_dtype="auto",
    new_conversations_per_day=1000,
    active_share=0.25,
    shared_prompt_tokens=1024,
    tensor_parallel_size=2,
    expert_parallel=True,
    # 8 × 141 GB of GPU memory need 2,256 GB beside them; 3,072 GB (24 × 128 GB) caps the
    # CPU tier at 816 GB per node, and no shared tier is planned.
    max_host_memory_gb=3072,
    without_shared_tier=True,
    # No NVMe tier although 1,000 new conversations a day are given: the figure is kept
    # as given (test_the_nvme_switch_reaches_the_plan shows the switch on a plan with one).
    without_nvme_tier=True,
    # No CPU tier either (test_the_cpu_tier_switch_reaches_the_plan shows the switch on
    # the seed, whose plan sells one).
    without_cpu_tier=True,
    serving_engine="sglang",
    # The traffic, every input away from its default (sizing.traffic.profile): 4 turns of
    # 1,000 + 500 tokens (6,000 ≤ 8,192 − 1,024), the customer's own gaps, half the users
    # in the busiest hour, looser TTFT and tighter TPOT than MLPerf's 2,000 / 200 ms.
    turns=4,
    gap_profile="agent",
    gap_median_s=60.0,
    gap_p90_s=300.0,
    new_prompt_tokens=1000,
    output_tokens=500,
    busy_hour_active_share=0.5,
    ttft_p95_ms=3000.0,
    tpot_ms=150.0,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _offline(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True  # the bundled catalog has Qwen3-30B-A3B


@pytest.fixture(scope="module")
def expected() -> Plan:
    return make_plan(PlanRequest(model=from_catalog(EVERY.model), workload=EVERY))


def test_every_field_differs_from_its_default() -> None:
    defaults = Workload(model=EVERY.model, context_tokens=1, users=1)
    changed = {n for n in FIELDS if getattr(EVERY, n) != getattr(defaults, n)}
    assert changed == set(FIELDS) - {"model"}
    assert EVERY.gpu != DEFAULT_GPU
    # The plan honours the explicit layout: TP 2, the experts over all 8 GPUs.
    plan = make_plan(PlanRequest(model=from_catalog(EVERY.model), workload=EVERY))
    assert (plan.parallelism.tensor_parallel_size, plan.parallelism.expert_parallel_size) == (2, 8)
    # The traffic reaches the plan: without it the plan under traffic differs.
    assert plan.request.traffic.turns == 4
    assert plan_summary(plan) != plan_summary(
        make_plan(PlanRequest(model=from_catalog(EVERY.model), workload=EVERY.replace(turns=3)))
    )


def form_data() -> dict[str, Any]:
    data = {name: value for name, value in EVERY.to_json().items() if value is not None}
    data["active_share"] = 25  # the form takes the share in percent
    data["expert_parallel"] = "on"
    data["without_shared_tier"] = "on"
    data["without_nvme_tier"] = "on"
    data["without_cpu_tier"] = "on"
    return data


def test_form(expected: Plan) -> None:
    form = WorkloadForm(form_data())
    assert form.is_valid(), form.errors
    assert form.plan is not None
    assert form.plan.request.workload == EVERY
    assert plan_summary(form.plan) == plan_summary(expected)


def cli_args() -> list[str]:
    """Every field as its flag; the booleans (all set in EVERY) as bare flags."""
    items = EVERY.to_json().items()
    args = [f"--{n.replace('_', '-')}={v}" for n, v in items if not isinstance(v, bool)]
    return args + [f"--{n.replace('_', '-')}" for n, v in items if v is True]


def test_cli(expected: Plan) -> None:
    args = cli_args()
    out = io.StringIO()
    call_command("size", *args, "--format=json", stdout=out)
    assert json.loads(out.getvalue())["summary"] == plan_summary(expected)


def test_cli_documented_traffic_flags(expected: Plan) -> None:
    # docs/cli.md spells two traffic flags apart from their fields.
    args = [a for a in cli_args() if not a.startswith(("--gap-profile", "--busy"))]
    args += ["--time-between-turns=agent", "--busy-hour-share=0.5"]
    out = io.StringIO()
    call_command("size", *args, "--format=json", stdout=out)
    assert json.loads(out.getvalue())["summary"] == plan_summary(expected)


@pytest.mark.parametrize("without", [False, True])
def test_the_nvme_switch_reaches_the_plan(client: Client, without: bool) -> None:
    # EVERY's plan sells no NVMe tier either way; the seed's does (one 6.4 TB drive for
    # its 2,000 new conversations a day, docs/sizing.md), so the switch shows there.
    seed = SEED_WORKLOAD.replace(without_nvme_tier=without)
    direct = make_plan(PlanRequest(model=from_catalog(seed.model), workload=seed))
    assert (direct.nvme.drive is None) is without
    defaults = Workload(model=seed.model, context_tokens=1, users=1).to_json()
    items = [(n, v) for n, v in seed.to_json().items() if n == "model" or v != defaults[n]]
    args = [f"--{n.replace('_', '-')}" + ("" if v is True else f"={v}") for n, v in items]
    assert ("--without-nvme-tier" in args) is without
    out = io.StringIO()
    call_command("size", *args, "--format=json", stdout=out)
    assert json.loads(out.getvalue())["summary"] == plan_summary(direct)
    body = dict(items)
    response = client.post("/api/plans", body, content_type="application/json")
    assert response.json()["summary"] == plan_summary(direct)


@pytest.mark.parametrize("without", [False, True])
def test_the_cpu_tier_switch_reaches_the_plan(client: Client, without: bool) -> None:
    # The seed's plan sells a 500 GiB CPU tier (docs/sizing.md); without it, none, and no
    # NVMe tier (the engines reach it through CPU memory), on the CLI and the API alike.
    seed = SEED_WORKLOAD.replace(without_cpu_tier=without)
    direct = make_plan(PlanRequest(model=from_catalog(seed.model), workload=seed))
    assert (direct.cpu_tier.total_gib == 0) is without
    assert (direct.nvme.drive is None) is without
    defaults = Workload(model=seed.model, context_tokens=1, users=1).to_json()
    items = [(n, v) for n, v in seed.to_json().items() if n == "model" or v != defaults[n]]
    args = [f"--{n.replace('_', '-')}" + ("" if v is True else f"={v}") for n, v in items]
    out = io.StringIO()
    call_command("size", *args, "--format=json", stdout=out)
    assert json.loads(out.getvalue())["summary"] == plan_summary(direct)
    response = client.post("/api/plans", dict(items), content_type="application/json")
    assert response.json()["summary"] == plan_summary(direct)


def test_api_bad_traffic_value_names_the_field(client: Client) -> None:
    body = {**EVERY.to_json(), "busy_hour_active_share": 1.5}
    response = client.post("/api/plans", body, content_type="application/json")
    assert (response.status_code, response.json()["field"]) == (400, "busy_hour_active_share")
    # Below the median of 60 s: a check across fields, the engine's, a 400 naming it.
    body = {**EVERY.to_json(), "gap_p90_s": 30.0}
    response = client.post("/api/plans", body, content_type="application/json")
    assert (response.status_code, response.json()["field"]) == (400, "gap_p90_s")


def test_api(client: Client, expected: Plan) -> None:
    response = client.post("/api/plans", EVERY.to_json(), content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["summary"] == plan_summary(expected)


def test_inquiry_quote_verification_bundle(client: Client, expected: Plan) -> None:
    data = {
        **form_data(),
        "name": "Ada Muster",
        "company": "Muster GmbH",
        "email": "ada@example.com",
        "consent": "on",
    }
    assert client.post("/quote/", data).status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.workload == EVERY
    assert (
        inquiry.plan_summary["cpu_tier_total_gib"] == plan_summary(expected)["cpu_tier_total_gib"]
    )

    quote = quote_create_from_inquiry(inquiry=inquiry, user=None)
    requested = quote.alternatives.get(position=0)
    assert requested.workload == EVERY
    # The stored summary carries the traffic charts' points as well (quotes/services.py).
    curves = json.loads(json.dumps(traffic_chart.curves(expected)))
    assert requested.plan_summary == {**plan_summary(expected), "traffic_curves": curves}

    report = verification_run(quote_id=quote.pk)
    measured = [
        (c.name, c.predicted) for c in report.checks.all() if c.alternative == requested.label
    ]
    direct = plan_checks(expected, alternative=requested.label)
    assert measured == [(c.name, pytest.approx(c.predicted)) for c in direct]

    client.force_login(make_presales())
    url = reverse("deployments:quote_bundle", args=[quote.pk])
    response = client.get(url, {"engine": "vllm", "alternative": "0"})
    assert response.status_code == 200
    assert unzip(response.content) == unzip(bundle_build(plan=expected, engine="vllm"))


def unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}
