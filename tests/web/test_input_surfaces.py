"""Every input of ``sizing.workload.Workload`` reaches every surface that takes a workload,
by its own name, and each surface checks it by its declaration.

The surfaces (``docs/adding-an-input.md``): the configurator form, the stored inquiry,
the CLI's ``size`` and ``recommend``, the JSON API's request schemas; and for the layout
of a recommended configuration (``sizing.search.space.LAYOUT_FIELDS``) the presales
form, the hidden inputs that post it, the API's answer schema and the recommendation's
JSON. A field added to ``Workload`` and left out of one of them fails here.
"""

from __future__ import annotations

import pytest
from django.core.management import load_command_class
from django.test import Client

from configurator.deployments.api_requests import BundleQuery, RecommendRequest, SizingRequest
from configurator.deployments.api_responses import ConfigurationOut
from configurator.inquiries.forms import WorkloadForm
from configurator.inquiries.models import Inquiry
from configurator.inquiries.workload_fields import OWN_UNITS, DeclaredLimits
from configurator.planning.recommend import layout_form_data
from configurator.quotes.forms import RecommendedChoiceForm
from sizing.search.space import LAYOUT_FIELDS
from sizing.workload import FIELDS, INPUTS, SEED_WORKLOAD

WORKLOAD = set(FIELDS)


def test_every_input_is_declared_with_a_label_and_its_limits() -> None:
    assert set(INPUTS) == WORKLOAD
    assert all(declared.label and declared.help for declared in INPUTS.values())


def test_the_form_has_every_input_and_checks_it_by_its_declaration() -> None:
    fields = WorkloadForm.base_fields
    assert set(fields) >= WORKLOAD
    for name in WORKLOAD - OWN_UNITS:
        checks = [v for v in fields[name].validators if isinstance(v, DeclaredLimits)]
        assert [c.declared for c in checks] == [INPUTS[name]], name


def test_the_inquiry_stores_every_input() -> None:
    columns = {f.name for f in Inquiry._meta.get_fields()}
    assert columns >= WORKLOAD


@pytest.mark.parametrize(
    ("app", "command"),
    [
        ("configurator.planning", "size"),
        ("configurator.planning", "recommend"),
        ("configurator.deployments", "bundle"),
    ],
)
def test_the_cli_has_a_flag_for_every_input(app: str, command: str) -> None:
    parser = load_command_class(app, command).create_parser("manage.py", command)
    required = ["--context", "8192", "--users", "10"]
    if command == "bundle":
        required += ["--out", "bundle.zip"]
    options = vars(parser.parse_args(required))
    assert set(options) >= WORKLOAD


def test_the_api_schemas_take_every_input(client: Client) -> None:
    for request in (SizingRequest, RecommendRequest, BundleQuery):
        assert set(request.model_fields) >= WORKLOAD, request.__name__
    schema = client.get("/api/openapi.json").json()
    body = schema["components"]["schemas"]["SizingRequest"]["properties"]
    query = {p["name"] for p in schema["paths"]["/api/bundle"]["get"]["parameters"]}
    assert set(body) >= WORKLOAD and query >= WORKLOAD


def test_the_layout_of_a_recommendation_is_on_every_surface() -> None:
    assert set(LAYOUT_FIELDS) <= WORKLOAD
    assert set(RecommendedChoiceForm.base_fields) == set(LAYOUT_FIELDS)
    assert set(ConfigurationOut.model_fields) >= set(LAYOUT_FIELDS)
    # the hidden inputs and the configurator link post every layout field that is set
    every_set = SEED_WORKLOAD.replace(
        tensor_parallel_size=2,
        max_host_memory_gb=1024,
        without_shared_tier=True,
        without_nvme_tier=True,
        without_cpu_tier=True,
    )
    data = layout_form_data(every_set.to_json())
    assert set(data) == set(LAYOUT_FIELDS)
    form = RecommendedChoiceForm(data)
    assert form.is_valid(), form.errors
    assert form.choice() == {name: getattr(every_set, name) for name in LAYOUT_FIELDS}
