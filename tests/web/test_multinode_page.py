"""A multi-node plan's nodes, router, shared tier and per-node NVMe on the customer page.

Workload: the seed form with 50,000 users (review of main: 25 nodes, shared tier
53.69 TB); the expected figures are read from the same plan's summary
(``plan_stored``), in English and German (configurator/locale/de django.po).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from configurator.planning.services import plan_stored
from sizing.summary import plan_summary
from tests.quote_factories import SEED_INPUTS
from tests.seed_form import seed_form

HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def figure(html: str, key: str) -> str:
    block = re.search(rf'id="figure-{key}">(.*?)</div>', html, re.S)
    assert block, f"figure {key} not in the page"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block.group(1)))


@pytest.mark.parametrize(
    ("language", "words"),
    [
        # The router's step is a whole sentence: it keeps a conversation's turns on the
        # instance holding its KV cache (sizing/layout/cluster.py).
        (
            "en",
            (
                "nodes ×",
                "per node",
                "a KV-aware router in front of the instances sends every turn of a "
                "conversation to the instance that holds its KV cache",
                "in total",
            ),
        ),
        (
            "de",
            (
                "Knoten ×",
                "je Knoten",
                "ein KV-bewusster Router vor den Instanzen leitet jede Runde eines "
                "Gesprächs an die Instanz, die seinen KV-Cache hält",
                "insgesamt",
            ),
        ),
    ],
)
def test_page_shows_nodes_router_shared_tier_and_nvme_per_node(
    client: Client, language: str, words: tuple[str, str, str, str]
) -> None:
    # 50,000 seed users on nodes of 24 × 48 GB without an NVMe tier: a shared tier takes
    # what the CPU tiers leave; with the seed's NVMe tier, that tier keeps it instead and
    # no shared tier is sold (sizing/serving/serve.py), so the NVMe figures come from that.
    shared = {"users": 50_000, "max_host_memory_gb": 1152, "new_conversations_per_day": 0}
    s = plan_summary(plan_stored({**SEED_INPUTS, **shared}))
    assert s["nodes"] > 1 and s["shared_tier_tb"] > 0

    def page(inputs: dict[str, Any]) -> str:
        headers = {**HTMX, "Accept-Language": language}
        return client.post(
            "/estimate/", {**seed_form(), **inputs}, headers=headers
        ).content.decode()

    nodes = figure(page(shared), "nodes")
    comma = "," if language == "de" else "."
    tb = f"{s['shared_tier_tb']:.1f}".replace(".", comma)
    assert f"{s['nodes']} {words[0]} 4 GPUs" in nodes and f"{tb} TB" in nodes
    assert words[1] in nodes and words[2] in nodes
    nvme = figure(page({"users": 50_000}), "nvme")
    assert words[1] in nvme and words[3] in nvme
