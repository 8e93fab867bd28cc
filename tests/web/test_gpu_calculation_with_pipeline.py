"""The shown GPU arithmetic adds up, with and without pipeline parallelism (PP).

The page's "Show the calculation" and the text of ``manage.py size`` write the
arithmetic behind the GPU layout and the conversations on the GPUs. Each test here
reads the written numbers back, redoes the written arithmetic (every number counted
as exact to half its last written digit) and compares it with the plan's own result
(``sizing.layout.parallelism.Parallelism`` of ``plan_stored`` for the same inputs, and
``sizing.summary.plan_summary``). The plans:

- Llama 3.1 405B on 8 × H100 SXM per node: 756 GiB of weights fit no node at TP 8
  (756 / 8 = 94.5 GiB per card), so one replica of TP 8 × PP 2 over two nodes;
- Qwen3-32B-FP8 on one L4 per node, FP8 cache: 31.9 GiB of weights fit no 22.5 GiB
  card, so replicas of TP 1 × PP 2; timed from the Ada family's estimate
  (sizing/data/performance.json families), the 500 users' load takes 28 of them;
- the seed (Qwen3-32B-FP8, 4 × RTX PRO 6000 SE per node): four TP-1 replicas on one
  node, and the same with one GPU per node, a single TP-1 replica.
"""

from __future__ import annotations

import ast
import html
import json
import math
import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from configurator.planning.services import plan_stored
from sizing.plan.orchestrator import Plan
from sizing.summary import plan_summary
from tests.quote_factories import SEED_INPUTS
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}

PLANS: dict[str, dict[str, Any]] = {
    "405b-tp8-pp2": {
        "model": "meta-llama/Llama-3.1-405B-Instruct",
        "context_tokens": 8192,
        "users": 100,
        "gpu": "h100-sxm",
        "gpus_per_node": 8,
    },
    "32b-l4-tp1-pp2": {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 500,
        "gpu": "l4",
        "gpus_per_node": 1,
        "kv_dtype": "fp8",
    },
    "seed-tp1": {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 500,
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 4,
        "kv_dtype": "fp8",
    },
    "seed-one-gpu": {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 500,
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 1,
        "kv_dtype": "fp8",
    },
}

# (TP, PP, replicas) each plan is expected to have, from the module docstring.
LAYOUTS = {
    "405b-tp8-pp2": (8, 2, 1),
    "32b-l4-tp1-pp2": (1, 2, 28),
    "seed-tp1": (1, 1, 4),
    "seed-one-gpu": (1, 1, 1),
}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    """No Hub lookups, and a fresh rate-limit cache."""
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def make(name: str) -> Plan:
    """The plan the page sizes for ``PLANS[name]``."""
    return plan_stored({**SEED_INPUTS, **PLANS[name]})


@dataclass(frozen=True)
class Shown:
    """One figure as the page shows it, tags stripped."""

    value: str
    detail: str
    steps: list[str]


def figure(client: Client, name: str | dict[str, Any], key: str, language: str = "en") -> Shown:
    """Figure ``key`` of the page's estimate for ``PLANS[name]`` (or the form fields
    ``name``) in ``language``."""
    fields = PLANS[name] if isinstance(name, str) else name
    page = client.post(
        "/estimate/", seed_form(**fields), headers={**HTMX, "Accept-Language": language}
    ).content.decode()
    block = re.search(rf'id="figure-{key}">(.*?)</details>', page, re.S)
    assert block, f"figure {key} not in the page"

    def text(fragment: str) -> str:
        return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)).strip())

    value = re.search(r'<dd class="value">(.*?)</dd>', block.group(1), re.S)
    detail = re.search(r'<dd class="detail">(.*?)</dd>', block.group(1), re.S)
    items = re.findall(r"<li[^>]*>(.*?)</li>", block.group(1), re.S)
    assert value and detail
    return Shown(text(value.group(1)), text(detail.group(1)), [text(i) for i in items])


class Interval:
    """A written number: exact to half its last written digit (integers exactly)."""

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, hi

    @classmethod
    def written(cls, text: str) -> Interval:
        value = float(text.replace(",", ""))
        half = 0.5 * 10 ** -len(text.partition(".")[2]) if "." in text else 0.0
        return cls(value - half, value + half)

    def combine(self, other: Interval, op: Any) -> Interval:
        ends = [op(a, b) for a in (self.lo, self.hi) for b in (other.lo, other.hi)]
        return Interval(min(ends), max(ends))


def evaluate(expression: str) -> Interval:
    """The range of an arithmetic expression of written numbers (``×``, ``/``, ``−``,
    ``+``, brackets), units and words removed."""
    text = re.sub(r"[A-Za-z]+", " ", expression).replace("×", "*").replace("−", "-")
    numbers: list[str] = []

    def name(match: re.Match[str]) -> str:
        numbers.append(match.group(0))
        return f"n{len(numbers) - 1}"

    tree = ast.parse(re.sub(r"\d[\d,]*(?:\.\d+)?", name, text).strip(), mode="eval")
    ops = {
        ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b,
        ast.Sub: lambda a, b: a - b,
        ast.Add: lambda a, b: a + b,
    }

    def walk(node: ast.expr) -> Interval:
        if isinstance(node, ast.Name):
            return Interval.written(numbers[int(node.id[1:])])
        assert isinstance(node, ast.BinOp), ast.dump(node)
        return walk(node.left).combine(walk(node.right), ops[type(node.op)])

    return walk(tree.body)


def written(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize("name", PLANS)
def test_the_plans_have_the_layouts_the_tests_are_about(name: str) -> None:
    p = make(name).parallelism
    assert (p.tensor_parallel_size, p.pipeline_parallel_size, p.total_replicas) == LAYOUTS[name]


@pytest.mark.parametrize("name", PLANS)
def test_headline_counts_the_gpus_of_a_replica_as_the_summary_does(
    client: Client, name: str
) -> None:
    plan = make(name)
    p, s = plan.parallelism, plan_summary(plan)
    gpus = figure(client, name, "gpus")
    # The summary's layout: "1 replica × 16 GPUs (TP 8 × PP 2) = 16 GPUs".
    assert s["layout"].startswith(f"{gpus.value} ")
    replicas, per_replica = re.fullmatch(r"(\d+) replicas? × (\d+) GPUs?", gpus.value).groups()  # type: ignore[union-attr]
    assert int(replicas) * int(per_replica) == s["gpus_total"] == p.gpus
    assert ("1 replica " in gpus.value) == (p.total_replicas == 1)
    assert f"{s['gpus_total']} × {plan.gpu.name} in {s['nodes']} node" in gpus.detail
    # German: "1 Replikat", "4 Replikate".
    assert figure(client, name, "gpus", "de").value.startswith(
        f"{p.total_replicas} Replikat{'' if p.total_replicas == 1 else 'e'} × "
    )


@pytest.mark.parametrize("name", PLANS)
def test_kv_budget_per_card_adds_up(client: Client, name: str) -> None:
    plan = make(name)
    p = plan.parallelism
    step = figure(client, name, "gpus").steps[0]
    formula, result = re.fullmatch(r"KV cache per card = (.*) = ([\d.]+) GiB", step).groups()  # type: ignore[union-attr]
    got = evaluate(formula)
    assert got.lo - 0.05 <= written(result) <= got.hi + 0.05, step
    assert written(result) == round(p.kv_cache_gib_per_gpu, 1)
    # The weights are divided by the GPUs of a replica, one stage of TP cards per node.
    assert plan.weights_gib / p.gpus_per_replica == pytest.approx(p.weights_gib_per_gpu)


@pytest.mark.parametrize("name", PLANS)
def test_conversations_per_replica_and_on_the_gpus_add_up(client: Client, name: str) -> None:
    plan = make(name)
    p = plan.parallelism
    steps = figure(client, name, "resident").steps
    (per_replica,) = [s for s in steps if s.startswith("per replica:")]
    formula, n = re.fullmatch(r"per replica: ⌊(.*)⌋ = (\d+) conversations", per_replica).groups()  # type: ignore[union-attr]
    got = evaluate(formula)
    assert int(n) == p.conversations_per_replica
    assert math.floor(got.lo) <= int(n) <= math.floor(got.hi), per_replica
    (on_gpus,) = [s for s in steps if s.startswith("on the GPUs:")]
    each, replicas, total = re.fullmatch(  # type: ignore[union-attr]
        r"on the GPUs: (\d+) × (\d+) replicas? = ([\d,]+)", on_gpus
    ).groups()
    assert int(each) * int(replicas) == written(total) == p.conversations_on_gpus
    assert int(replicas) == p.total_replicas
    assert ("replicas" in on_gpus) == (p.total_replicas != 1)


def test_pipeline_parallel_plan_says_how_its_replica_spans_the_nodes(client: Client) -> None:
    steps = figure(client, "405b-tp8-pp2", "gpus").steps
    # GPUs per replica = TP × PP = 8 × 2 = 16
    # (sizing.layout.parallelism.Parallelism.gpus_per_replica).
    assert any(s.endswith("GPUs per replica = 8 × 2 = 16") for s in steps)
    assert "weights / (8 × 2) = " in steps[0]


@pytest.mark.parametrize("name", PLANS)
def test_text_report_layout_and_budget_rule_follow_the_plan(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fields = PLANS[name]
    args = ["--model", fields["model"], "--context", str(fields["context_tokens"])]
    args += ["--users", str(fields["users"]), "--gpu", fields["gpu"]]
    args += ["--gpus-per-node", str(fields["gpus_per_node"])]
    args += ["--kv-dtype", fields.get("kv_dtype", "fp8")]
    call_command("size", *args, "--format", "json")
    s = json.loads(capsys.readouterr().out)["summary"]
    call_command("size", *args)
    out = capsys.readouterr().out
    replicas, tp, pp = s["replicas"], s["tensor_parallel_size"], s["pipeline_parallel_size"]
    per_replica = s["gpus_total"] // replicas
    assert per_replica * replicas == s["gpus_total"] and per_replica == tp * pp
    layout = (
        f"{replicas} replica{'' if replicas == 1 else 's'} x {per_replica} "
        f"GPU{'' if per_replica == 1 else 's'} (tensor parallel {tp}"
        + (f" x pipeline parallel {pp})" if pp > 1 else ")")
    )
    assert f"layout:                {layout}\n" in out
    rule = "weights / (TP x PP))" if pp > 1 else "weights / TP)"
    assert f"KV cache per GPU:      {s['kv_cache_gib_per_gpu']} GiB (" in out and rule in out


EXPERT_PARALLEL = {
    # Qwen3-30B-A3B: 128 routed experts; with expert parallel each of the 4 cards holds a
    # quarter of them and (at TP 1) all of the other weights
    # (sizing.memory.gpu_budget.weights_per_gpu_gib).
    "model": "Qwen/Qwen3-30B-A3B",
    "context_tokens": 8192,
    "users": 100,
    "gpu": "rtx-pro-6000-se",
    "gpus_per_node": 4,
    "kv_dtype": "fp8",
    "expert_parallel": True,
}


def test_an_expert_parallel_budget_subtracts_the_weights_on_the_card(client: Client) -> None:
    plan = plan_stored({**SEED_INPUTS, **EXPERT_PARALLEL})
    p = plan.parallelism
    assert p.expert_parallel_size == 4 and p.tensor_parallel_size == 1
    steps = figure(client, {**EXPERT_PARALLEL, "expert_parallel": "on"}, "gpus").steps
    budget, weights = steps[0], steps[1]
    assert "weights / " not in budget  # not the total over TP: the experts go over EP
    formula, result = re.fullmatch(r"KV cache per card = (.*) = ([\d.]+) GiB", budget).groups()  # type: ignore[union-attr]
    got = evaluate(formula)
    assert got.lo - 0.05 <= written(result) <= got.hi + 0.05, budget
    assert written(result) == round(p.kv_cache_gib_per_gpu, 1)
    sum_formula, on_card = re.fullmatch(  # type: ignore[union-attr]
        r"weights on a card = (.*) = ([\d.]+) GiB", weights
    ).groups()
    assert "/ EP 4 +" in sum_formula and "/ TP 1" in sum_formula
    added = evaluate(sum_formula.replace("EP", "").replace("TP", ""))
    assert added.lo - 0.05 <= written(on_card) <= added.hi + 0.05, weights
    assert written(on_card) == round(p.weights_gib_per_gpu, 1)
    assert f"− {on_card} GiB weights on the card" in budget


@pytest.mark.parametrize(("name", "gpus"), [("seed-one-gpu", "1 GPU"), ("seed-tp1", "4 GPUs")])
def test_replicas_per_node_count_the_gpus_in_the_right_number(
    client: Client, name: str, gpus: str
) -> None:
    steps = figure(client, name, "gpus").steps
    (step,) = [s for s in steps if "replicas per node =" in s]
    assert f"replicas per node = {gpus} / 1 = " in step


def test_the_text_report_of_an_expert_parallel_plan_names_the_weights_on_a_card(
    capsys: pytest.CaptureFixture[str],
) -> None:
    f = EXPERT_PARALLEL
    args = ["--model", f["model"], "--context", str(f["context_tokens"])]
    args += ["--users", str(f["users"]), "--gpu", f["gpu"]]
    args += ["--gpus-per-node", str(f["gpus_per_node"])]
    call_command("size", *args, "--kv-dtype", f["kv_dtype"], "--expert-parallel")
    out = capsys.readouterr().out
    on_card = round(plan_stored({**SEED_INPUTS, **f}).parallelism.weights_gib_per_gpu, 1)
    assert f"- {on_card} GiB weights on a card: routed experts / EP 4 + other weights / TP)" in out
    assert "- weights / TP)" not in out
