"""The estimate's section is rendered once per workload, model and language and then
served from the fragments cache (configurator/inquiries/estimates.py); what differs in
any of them is rendered anew.

Expected figures: the seed example (DESIGN §3), Qwen/Qwen3-32B-FP8 with an FP8 cache is
128 KiB per token, 1 GiB per 8,192-token conversation; its config with half the layers
(32 instead of 64) holds half of that, 0.5 GiB.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.test.signals import template_rendered

from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
SEED_CONFIG = json.loads(
    (Path(__file__).resolve().parents[2] / "sizing/data/models.json").read_text("utf-8")
)["models"]["Qwen/Qwen3-32B-FP8"]["config"]


@pytest.fixture
def tier_charts_drawn(settings: Any) -> Iterator[list[str]]:
    """The names of the tier-chart templates rendered (one per section rendered)."""
    settings.HF_HUB_OFFLINE = True
    caches["fragments"].clear()
    names: list[str] = []

    def rendered(sender: Any, template: Any, **kwargs: Any) -> None:
        if template.name == "inquiries/_tier_chart.html":
            names.append(template.name)

    template_rendered.connect(rendered)
    yield names
    template_rendered.disconnect(rendered)


def kv_figure(html: str) -> str:
    match = re.search(r'id="figure-kv">.*?<dd class="value">([^<]*)</dd>', html, re.S)
    assert match, "no KV figure in the estimate"
    return match.group(1)


def test_a_repeated_estimate_is_served_from_the_cache(
    client: Client, tier_charts_drawn: list[str]
) -> None:
    first = client.post("/estimate/", seed_form(), headers={**HTMX, "Accept-Language": "en"})
    again = client.post("/estimate/", seed_form(), headers={**HTMX, "Accept-Language": "en"})
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert len(tier_charts_drawn) == 1
    client.post("/estimate/", seed_form(users=501), headers={**HTMX, "Accept-Language": "en"})
    client.post("/estimate/", seed_form(), headers={**HTMX, "Accept-Language": "de"})
    assert len(tier_charts_drawn) == 3  # another workload, another language


def test_each_language_gets_its_own_section(client: Client, tier_charts_drawn: list[str]) -> None:
    english = client.post("/estimate/", seed_form(), headers={**HTMX, "Accept-Language": "en"})
    german = client.post("/estimate/", seed_form(), headers={**HTMX, "Accept-Language": "de"})
    assert "Where the conversations live" in english.content.decode()
    assert "Wo die Gespräche liegen" in german.content.decode()


def test_two_private_configs_of_one_name_are_sized_each_for_its_own(
    client: Client, tier_charts_drawn: list[str]
) -> None:
    def upload(config: dict[str, Any]) -> str:
        file = SimpleUploadedFile("config.json", json.dumps(config).encode())
        data = seed_form(model="", config_file=file, model_name="acme/private", weights_gib="30")
        response = client.post("/estimate/upload/", data, headers={**HTMX, "Accept-Language": "en"})
        assert response.status_code == 200
        return kv_figure(response.content.decode())

    seed = upload(SEED_CONFIG)
    half = upload({**SEED_CONFIG, "num_hidden_layers": 32})
    assert seed == "1.00 GiB"
    assert half == "0.50 GiB"
