"""Workload inputs of the plan: the share of users active at once and a shared prompt.

Expected values come from the seed's worked example (Qwen3-32B-FP8, 4 × RTX PRO 6000
SE, 8,192 tokens, 500 users, FP8 cache: 128 KiB per token, 1 GiB per conversation,
51.09 GiB of KV cache per card) and the rules in docs/sizing.md §4: prefix caching
stores a shared prefix once per engine instance (vLLM docs, "Automatic Prefix
Caching"), the CPU tier keeps every user warm, active users must be on the GPUs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from configurator.inquiries.forms import WorkloadForm
from sizing.errors import SizingError
from sizing.model.spec import from_catalog
from sizing.performance.calibration import reload_path
from sizing.plan.orchestrator import Plan, make_plan
from sizing.summary import plan_summary
from sizing.verdict import BINDING
from sizing.workload import Workload
from tests.factories import plan_request

ROOT = Path(__file__).resolve().parents[2]


def seed_plan(**changes: Any) -> Plan:
    kw: dict[str, Any] = {
        "model": from_catalog("Qwen/Qwen3-32B-FP8"),
        "context_tokens": 8192,
        "users": 500,
        "new_conversations_per_day": 2000,
    }
    kw.update(changes)
    return make_plan(plan_request(**kw))


def test_defaults_keep_the_seed_example() -> None:
    s = plan_summary(seed_plan())
    # Seed: users take turns (no share given, so no active-user check), no shared prompt;
    # 1 GiB per conversation, 500 GiB tier, and no warning on the seed quote.
    assert (s["active_users"], s["shared_prompt_tokens"], s["shared_prompt_gib"]) == (None, 0, 0)
    assert s["active_users_fit"] is True
    assert s["warnings"] == []
    assert s["conversation_unique_gib"] == s["conversation_gib"] == 1.0
    assert s["conversations_on_gpus"] == 204 and s["cpu_tier_total_gib"] == 500.0


def test_shared_prompt_is_stored_once_per_instance() -> None:
    p = seed_plan(shared_prompt_tokens=2048)
    s = plan_summary(p)
    # 2,048 × 131,072 B = 0.25 GiB of prefix; each conversation keeps 0.75 GiB of its own.
    assert s["shared_prompt_gib"] == 0.25
    assert s["conversation_unique_gib"] == 0.75
    assert s["conversation_gib"] == 1.0  # the whole conversation is unchanged
    # GPU: ⌊(51.09 − 0.25) / 0.75⌋ = 67 per card (the prefix once per replica).
    assert s["conversations_per_gpu"] == 67 and s["conversations_on_gpus"] == 268
    # CPU tier: 500 × 0.75 + 4 instances × 0.25 = 376 GiB, 94 GiB per instance.
    assert s["cpu_tier_total_gib"] == 376.0
    assert s["cpu_tier_per_instance_gib"] == 94.0
    assert s["vllm_kv_offloading_size_gib"] == 94
    # NVMe: only new bytes are written, 2,000 × 0.75 GiB = 1.61 TB a day.
    assert s["nvme_writes_tb_per_day"] == pytest.approx(2000 * 0.75 * 2**30 / 1e12, abs=0.001)
    # A reload copies the conversation's own 0.75 GiB, not the prefix on the GPU: beyond
    # its fixed part (sizing/data/performance.json, vLLM CPU tier) it is 0.75 of the seed's.
    fixed = reload_path("vllm", "cpu").fixed_ms
    own, whole = p.transfer.reload_ms, seed_plan().transfer.reload_ms
    assert own is not None and whole is not None
    assert own - fixed == pytest.approx(0.75 * (whole - fixed))


def test_active_users_that_fit_raise_no_warning() -> None:
    s = plan_summary(seed_plan(active_share=0.3))
    # ⌈500 × 0.3⌉ = 150 active ≤ 204 resident (seed figure).
    assert (s["active_users"], s["active_users_fit"]) == (150, True)
    assert BINDING["active"] not in s["binding_constraints"]
    # The CPU tier still keeps every user warm: 500 × 1 GiB.
    assert s["cpu_tier_total_gib"] == 500.0 and s["offload_pays"] is True


def test_active_users_beyond_the_gpus_name_the_binding_constraint() -> None:
    s = plan_summary(seed_plan(active_share=0.5))
    # 250 active > 204 resident: the GPU capacity for active users binds.
    assert (s["active_users"], s["active_users_fit"]) == (250, False)
    assert s["binding_constraints"] == [BINDING["active"]]
    warning = next(w for w in s["warnings"] if "active at once" in w)
    assert "250 users" in warning and "204" in warning
    # The seed plan already has an FP8 cache, so FP8 is not offered as a fix.
    assert "More GPUs" in warning and "shorter context" in warning and "FP8" not in warning
    bf16 = plan_summary(seed_plan(active_share=0.5, kv_dtype="auto"))
    warning = next(w for w in bf16["warnings"] if "active at once" in w)
    assert "an FP8 KV cache" in warning


def test_active_users_round_up() -> None:
    # ⌈7 × 0.3⌉ = ⌈2.1⌉ = 3; ⌈10 × 0.3⌉ = 3 exactly (no float round-up to 4).
    assert (
        Workload(model="Qwen/Qwen3-8B", context_tokens=1, users=7, active_share=0.3).active_users
        == 3
    )
    assert (
        Workload(model="Qwen/Qwen3-8B", context_tokens=1, users=10, active_share=0.3).active_users
        == 3
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"active_share": 0.0}, "active_share"),
        ({"active_share": 1.5}, "active_share"),
        ({"active_share": float("nan")}, "active_share"),
        ({"shared_prompt_tokens": -1}, "shared_prompt_tokens"),
        ({"shared_prompt_tokens": 8192}, "shared_prompt_tokens"),
    ],
)
def test_bad_workload_inputs_name_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(SizingError) as err:
        seed_plan(**changes)
    assert err.value.field == field


def run_size(*args: str) -> subprocess.CompletedProcess[str]:
    seed = ["--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500"]
    return subprocess.run(
        [sys.executable, "manage.py", "size", *seed, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},  # never the real Hub
    )


def test_cli_takes_active_share_and_shared_prompt() -> None:
    done = run_size("--active-share", "0.3", "--shared-prompt-tokens", "2048", "--format", "json")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)["summary"]
    # Same figures as test_shared_prompt_is_stored_once_per_instance.
    assert (s["active_users"], s["shared_prompt_tokens"]) == (150, 2048)
    assert s["cpu_tier_total_gib"] == 376.0


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--active-share", "1.5"], "--active-share"),
        (["--active-share", "lots"], "--active-share"),
        (["--shared-prompt-tokens", "8192"], "--shared-prompt-tokens"),
    ],
)
def test_cli_bad_workload_input_exits_2_with_one_line(args: list[str], flag: str) -> None:
    done = run_size(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0]


@pytest.mark.django_db
def test_customer_form_passes_the_workload_inputs(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    data = {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 500,
        "active_share": 30,
        "shared_prompt_tokens": 2048,
        "kv_dtype": "fp8",
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 4,
        "new_conversations_per_day": 2000,
    }
    form = WorkloadForm(data)
    assert form.is_valid(), form.errors
    assert form.plan is not None
    s = plan_summary(form.plan)
    assert (s["active_users"], s["shared_prompt_tokens"], s["cpu_tier_total_gib"]) == (
        150,
        2048,
        376.0,
    )
    # A prompt as long as the context is refused at its own field.
    form = WorkloadForm({**data, "shared_prompt_tokens": 8192})
    assert not form.is_valid()
    assert "shared_prompt_tokens" in form.errors


def test_nvme_tier_is_capped_at_the_chassis_bays() -> None:
    # 10,000,000 new 1 GiB conversations a day need 10,737 TB; the chassis has 4 NVMe bays
    # (ASRock Rack 4U8G-TURIN2, ServeTheHome review): the tier is capped and says so.
    s = plan_summary(seed_plan(new_conversations_per_day=10_000_000))
    assert s["nvme_drive_count"] == 4
    assert "NVMe bays per node" in s["binding_constraints"]
    assert any("4 bays" in w and "NAS or S3" in w for w in s["warnings"])


def test_host_memory_never_exceeds_the_chassis_slots() -> None:
    # Llama-3.1-8B, 32,768 tokens, 16-bit cache: 32 layers × 8 KV heads × 128 × 2 × 2 B
    # = 128 KiB per token, 4 GiB per conversation; 2,000 users need about 8,590 GB of
    # buffer, more than one node's 24 slots × 256 GB = 6,144 GB. The plan spreads them
    # over identical nodes, each within its slots; their CPU tiers hold every resting
    # conversation, so no shared tier is sold (it would take no returns,
    # sizing/serving/serve.py).
    s = plan_summary(
        make_plan(
            plan_request(
                model=from_catalog("meta-llama/Llama-3.1-8B-Instruct"),
                context_tokens=32_768,
                users=2_000,
                gpu="h200-nvl",
                gpus_per_node=2,
                kv_dtype="auto",
            )
        )
    )
    assert s["nodes"] > 1
    assert s["dimm_count"] <= 24 and s["host_memory_gb"] <= 6144
    assert s["cpu_tier_total_gib"] * 2**30 / 1e9 / s["nodes"] <= 6144
    assert s["shared_tier_tb"] == 0.0 and s["conversations_recomputed"] == 0


def test_host_memory_beyond_one_node_on_a_card_estimated_from_its_family_spreads_nodes() -> None:
    # The same workload on the L40S, which has no prefill measurement of its own: it is
    # timed from the Hopper class with its band (sizing/data/performance.json families),
    # so its users spread over more nodes as on a measured card instead of being refused
    # for the slots of one node.
    plan = make_plan(
        plan_request(
            model=from_catalog("meta-llama/Llama-3.1-8B-Instruct"),
            context_tokens=32_768,
            users=2_000,
            gpu="l40s",
            gpus_per_node=2,
            kv_dtype="auto",
        )
    )
    assert plan.parallelism.nodes > 1
    assert plan.host.dimm_count <= 24
