""" "Show the calculation" states the terms each figure is made of, and they add up.

The TTFT lines of "What a hit is worth" must sum to the total they show (each term is
read from the performance model's result objects, ``sizing.performance.ttft``), in
English and German. A large workload (1,000,000 users, 10,000,000 new conversations a
day, the seed model and GPU; sizing article, docs/sizing.md) must state the replicas and
nodes the plan really has; the expected figures come from ``sizing.summary.plan_summary``.
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

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
LARGE = {"users": 1_000_000, "new_conversations_per_day": 10_000_000}
WORN_IN_A_MONTH = {"new_conversations_per_day": 10_000_000}
"""The seed's one node writing 10 million conversations × 1 GiB a day (10.7 PB) on its
four bays of the drive rated for the most writes (sizing/memory/nvme.py): 5 years × rated /
written ≈ 0.86 months. Spread over many nodes (LARGE), each node writes only its share."""
SEPARATORS = {"en": (".", ","), "de": (",", ".")}
HIT_LINES = {
    "en": ("miss:", "CPU-tier hit:", "GPU prefix-cache hit:"),
    "de": ("Fehltreffer:", "Treffer in der CPU-Speicherstufe:", "Treffer im GPU-Präfix-Cache:"),
}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    """No Hub lookups, and a fresh rate-limit cache."""
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def steps(client: Client, inputs: dict[str, Any], language: str, key: str) -> list[str]:
    """The calculation lines of figure ``key``, tags stripped."""
    html = client.post(
        "/estimate/", inputs, headers={**HTMX, "Accept-Language": language}
    ).content.decode()
    block = re.search(rf'id="figure-{key}">(.*?)</div>', html, re.S)
    assert block, f"figure {key} not in the page"
    items = re.findall(r"<li[^>]*>(.*?)</li>", block.group(1), re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", i)).strip() for i in items]


def number(text: str, language: str) -> float:
    """``text`` as the page writes a number in ``language``, read back."""
    decimal, thousands = SEPARATORS[language]
    return float(text.replace("−", "-").replace(thousands, "").replace(decimal, "."))


def terms_and_total(line: str, language: str) -> tuple[list[float], float]:
    """The ms of each " + " term (the last "… ms" in it) and the total after " = "."""
    left, total = line.rsplit(" = ", 1)
    values = []
    for term in left.split(" + "):
        found = re.findall(r"([−-]?[\d.,]*\d) ms", term)
        assert found, f"no ms in term {term!r} of {line!r}"
        values.append(number(found[-1], language))
    return values, number(total.removesuffix(" ms"), language)


@pytest.mark.parametrize("language", ["en", "de"])
def test_each_ttft_line_sums_to_its_total(client: Client, language: str) -> None:
    returning = plan_stored(SEED_INPUTS).transfer.returning
    assert returning is not None
    cpu, gpu = returning.tier("cpu").hit, returning.tier("gpu").hit
    assert cpu is not None and gpu is not None
    # The seed's CPU hit carries vLLM's fitted per-request correction (−3.2 ms,
    # sizing/data/performance.json), which the line must show as a term of its own.
    assert cpu.correction_ms < 0
    lines = steps(client, seed_form(), language, "transfer")
    expected = dict(
        zip(HIT_LINES[language], (returning.miss_ms, cpu.ttft_ms, gpu.ttft_ms), strict=True)
    )
    for prefix, total_ms in expected.items():
        (line,) = [s for s in lines if s.startswith(prefix)]
        values, total = terms_and_total(line.removeprefix(prefix), language)
        assert total == pytest.approx(total_ms, abs=0.05)  # the model's TTFT, 1 decimal
        # Each term is rounded to 0.1 ms on its own: the sum may differ by its rounding.
        assert sum(values) == pytest.approx(total, abs=0.05 * len(values) + 1e-9), line
    (cpu_line,) = [s for s in lines if s.startswith(HIT_LINES[language][1])]
    assert "−3" in cpu_line


@pytest.mark.parametrize(
    ("language", "traffic", "prefill"),
    [
        (
            "en",
            "681 new prompt tokens and 343 output tokens per turn",
            "prefill of the 1,024 new tokens of the turn (the last answer and the new prompt)",
        ),
        (
            "de",
            "681 neue Prompt-Token und 343 Ausgabe-Token je Runde",
            "Prefill der 1.024 neuen Token der Runde (die letzte Antwort und der neue Prompt)",
        ),
    ],
)
def test_a_hit_prefills_the_turn_the_traffic_assumes(
    client: Client, language: str, traffic: str, prefill: str
) -> None:
    # The seed's default traffic (sizing/traffic/profile.py): 8,192 tokens over 8 turns, 343
    # output and 1,024 − 343 = 681 new prompt tokens per turn. A returning turn prefills
    # the last answer and the new prompt, 343 + 681 = 1,024 tokens, as the serving model
    # does (sizing/serving/load.py); "What a hit is worth" prefills the same turn.
    html = client.post(
        "/estimate/", seed_form(), headers={**HTMX, "Accept-Language": language}
    ).content.decode()
    assert traffic in re.sub(r"\s+", " ", html)
    lines = steps(client, seed_form(), language, "transfer")
    hits = [s for s in lines if s.startswith(HIT_LINES[language][1:])]
    assert len(hits) == 2 and all(prefill in line for line in hits), hits


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_large_workload_states_the_plans_replicas_and_nodes(
    client: Client, language: str
) -> None:
    summary = plan_summary(plan_stored({**SEED_INPUTS, **LARGE}))
    assert summary["nodes"] > 1  # the workload needs many nodes
    lines = " | ".join(steps(client, seed_form(**LARGE), language, "gpus"))
    thousands = SEPARATORS[language][1]

    def n(value: int) -> str:
        return f"{value:,}".replace(",", thousands)

    per_node = summary["gpus_per_node"] // summary["tensor_parallel_size"]
    memory = summary["gpus_for_memory"] // summary["tensor_parallel_size"]
    compute = summary["gpus_for_compute"] // summary["tensor_parallel_size"]
    needed = max(memory, compute)
    word = {"en": "replicas", "de": "Replikate"}[language]
    assert f"max({n(memory)} " in lines and f" {n(compute)} " in lines
    assert f"= {n(needed)}" in lines
    assert f"⌈{n(needed)} / {n(per_node)} " in lines
    assert (
        f"= {n(summary['nodes'])}; {word} = {n(summary['nodes'])} × {n(per_node)} = "
        f"{n(summary['replicas'])}" in lines
    )
    # No line claims the node's few replicas are the plan's.
    assert f"{word} = {n(summary['gpus_per_node'])} GPUs" not in lines


def test_host_memory_of_many_nodes_is_labelled_per_node(client: Client) -> None:
    summary = plan_summary(plan_stored({**SEED_INPUTS, **LARGE}))
    html = client.post(
        "/estimate/", seed_form(**LARGE), headers={**HTMX, "Accept-Language": "en"}
    ).content.decode()
    value = f"{summary['dimm_count']} × {summary['dimm_gb']} GB = {summary['host_memory_gb']:,} GB"
    assert f"{value} per node" in re.sub(r"\s+", " ", html)
    seed_html = client.post(
        "/estimate/", seed_form(), headers={**HTMX, "Accept-Language": "en"}
    ).content.decode()
    assert "GB per node" not in seed_html  # one node: nothing to tell apart


@pytest.mark.parametrize(
    ("language", "singular", "plural"),
    [
        ("en", "about 1 month at", "about 1 months"),
        ("de", "etwa 1 Monat,", "etwa 1 Monaten"),
    ],
)
def test_one_month_of_nvme_endurance_is_singular(
    client: Client, language: str, singular: str, plural: str
) -> None:
    summary = plan_summary(plan_stored({**SEED_INPUTS, **WORN_IN_A_MONTH}))
    (months,) = [
        w["values"]["months"]
        for w in summary["verdict_notes"]["warnings"]
        if w["code"] == "nvme_worn"
    ]
    assert round(months) == 1  # the seed node wears its drives out in about a month
    html = client.post(
        "/estimate/", seed_form(**WORN_IN_A_MONTH), headers={**HTMX, "Accept-Language": language}
    ).content.decode()
    text = re.sub(r"\s+", " ", html)
    assert singular in text and plural not in text


@pytest.mark.parametrize(("language", "words"), [("en", "at TP 2"), ("de", "bei TP 2")])
def test_tp_communication_names_the_tp_size_without_a_bare_gpu_count(
    client: Client, language: str, words: str
) -> None:
    # The seed with TP 2 on its four GPUs (vLLM's divisibility rule, sizing/plan/layout_choice.py):
    # the
    # miss line's TP communication is that of a 2-GPU group, worded as its TP size.
    inputs = seed_form(tensor_parallel_size=2)
    (miss,) = [
        s
        for s in steps(client, inputs, language, "transfer")
        if s.startswith(HIT_LINES[language][0])
    ]
    assert words in miss
    assert not re.search(r"\b2 GPU\b", miss)
