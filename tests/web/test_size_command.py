"""``manage.py size``: the engineers' CLI, its JSON contract and its errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]
SEED_ARGS = [
    "--model",
    "Qwen/Qwen3-32B-FP8",
    "--context",
    "8192",
    "--users",
    "500",
    "--gpu",
    "rtx-pro-6000-se",
    "--gpus-per-node",
    "4",
    "--kv-dtype",
    "fp8",
    "--new-conversations-per-day",
    "2000",
]
CONTRACT_KEYS = {
    "kv_bytes_per_token",
    "conversation_gib",
    "weights_gib",
    "kv_cache_gib_per_gpu",
    "conversations_per_gpu",
    "conversations_on_gpus",
    "resting_conversations",
    "tensor_parallel_size",
    "replicas",
    "cpu_tier_total_gib",
    "cpu_tier_total_gb",
    "cpu_tier_per_instance_gib",
    "dimm_count",
    "dimm_gb",
    "host_memory_gb",
    "host_memory_free_after_buffer_gb",
    "nvme_writes_tb_per_day",
    "vllm_kv_offloading_size_gib",
    "vllm_cpu_bytes_to_use",
    "offload_pays",
}


def run_size(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "size", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        # Offline: an unknown model must not send the test to the real Hugging Face Hub.
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def test_json_summary_has_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("size", *SEED_ARGS, "--format", "json")
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary.keys() >= CONTRACT_KEYS
    # Seed example: 125 GiB per instance → cpu_bytes_to_use 125 × 2^30.
    assert summary["vllm_cpu_bytes_to_use"] == 134_217_728_000


def test_text_report_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("size", *SEED_ARGS)
    out = capsys.readouterr().out
    assert "4 replicas x 1 GPU" in out
    assert "24 x 48 GB = 1152 GB" in out
    # With the seed's NVMe tier (2,000 new conversations a day) the short flag cannot
    # express the tier: the report points to the full form (engine_flags.md §1.2-1.3).
    assert "cpu_bytes_to_use 134217728000" in out and "TieringOffloadingSpec" in out
    assert "--kv-offloading-size 125 " not in out


def test_text_report_states_nodes_router_shared_tier_and_nvme_per_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The seed with 50,000 users needs several nodes: on nodes of 24 × 48 GB without an
    NVMe tier, a shared tier takes the returns the CPU tiers leave (53.69 TB); with the
    seed's 2,000 new conversations a day, the NVMe tier keeps them instead (no shared tier
    is then sold, sizing/serving/serve.py). The text names them, and which NVMe figures are
    per node or in total, with the same figures as the JSON summary."""
    args = [a for a in SEED_ARGS if a not in ("--new-conversations-per-day", "2000")]
    args[args.index("--users") + 1] = "50000"
    args += ["--max-host-memory-gb", "1152"]
    call_command("size", *args, "--format", "json")
    s = json.loads(capsys.readouterr().out)["summary"]
    assert s["nodes"] > 1 and s["shared_tier_tb"] > 0
    call_command("size", *args)
    out = capsys.readouterr().out
    assert f"{s['nodes']} identical nodes, {s['gpus_total']} GPUs in all" in out
    assert "KV-aware router" in out
    assert f"shared tier:           {s['shared_tier_tb']} TB" in out
    assert f"{s['shared_tier_gbps']} GB/s network per node" in out
    assert f"{s['host_memory_gb']} GB per node" in out
    args = [*SEED_ARGS]
    args[args.index("--users") + 1] = "50000"
    call_command("size", *args, "--format", "json")
    s = json.loads(capsys.readouterr().out)["summary"]
    assert s["nodes"] > 1 and s["nvme_drive_count"] >= 1 and s["shared_tier_tb"] == 0
    call_command("size", *args)
    out = capsys.readouterr().out
    assert f"{s['nvme_writes_tb_per_day']} TB in total" in out
    assert f"per node ({s['nvme_drive_count'] * s['nodes']} in all)" in out


def test_text_report_gives_the_short_flag_without_an_nvme_tier(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [a for a in SEED_ARGS if a not in ("--new-conversations-per-day", "2000")]
    call_command("size", *args)
    # Seed: 125 GiB per instance → --kv-offloading-size 125 (GiB, whole instance).
    assert "--kv-offloading-size 125   (cpu_bytes_to_use 134217728000)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (["--model", "nobody/no-such-model"], "--model: unknown model 'nobody/no-such-model'"),
        (["--model", "not a repo id"], "--model: 'not a repo id' is not a Hugging Face model id"),
        (["--context", "0"], "--context: the context (tokens) must be between 1 and 10,000,000"),
        (["--context", "50000"], "exceeds Qwen/Qwen3-32B-FP8's limit of 40,960 tokens"),
        (["--users", "0"], "--users: the number of users must be between 1 and 1,000,000"),
        (["--gpu", "gtx-1080"], "--gpu: unknown GPU 'gtx-1080'"),
        (["--users", "many"], "--users: the number of users must be a whole number, got 'many'"),
    ],
)
def test_bad_input_exits_2_with_one_line(override: list[str], expected: str) -> None:
    args = list(SEED_ARGS)
    flag = override[0]
    i = args.index(flag)
    args[i : i + 2] = override
    result = run_size(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0]
    assert result.stdout == ""


def test_traffic_flags_reach_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    # 5,000 users of the seed model with four turns a conversation and a 1.5 s TTFT p95
    # target: the plan meets the target it was given and says which defaults it used.
    call_command(
        "size",
        "--model",
        "Qwen/Qwen3-32B-FP8",
        "--context",
        "8192",
        "--users",
        "5000",
        "--turns",
        "4",
        "--ttft-p95-ms",
        "1500",
        "--format",
        "json",
    )
    s = json.loads(capsys.readouterr().out)["summary"]
    assert s["ttft_p95_target_ms"] == 1500.0 and s["ttft_p95_ms"] <= 1500
    assert s["nodes"] > 1
    assert not any("turns per conversation" in a for a in s["traffic_assumptions"])
    assert any("chat profile" in a for a in s["traffic_assumptions"])


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--gap-median-s", "100"], "--gap-p90-s"),
        (["--turns", "100", "--new-prompt-tokens", "500"], "--turns"),
        (["--ttft-p95-ms", "0"], "--ttft-p95-ms"),
        (["--busy-hour-share", "nan"], "--busy-hour-share"),
    ],
)
def test_bad_traffic_flags_name_the_flag(flags: list[str], named: str) -> None:
    with pytest.raises(CommandError) as err:
        call_command(
            "size", "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500", *flags
        )
    assert str(err.value).startswith(f"{named}: ") and err.value.returncode == 2


def test_assumptions_state_the_target_the_plan_was_sized_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Llama-3.3-70B at 32,768 tokens on four RTX PRO 6000: one request's TTFT p95 without
    # load is above 2,000 ms / 1.5, so the plan is sized for 1.5 × that
    # (sizing/serving/targets.py, RELAXED_TARGET_FACTOR); the assumptions say so beside the
    # default instead of stating 2,000 ms as what it was sized for.
    call_command(
        "size",
        *["--model", "meta-llama/Llama-3.3-70B-Instruct", "--context", "32768"],
        *["--users", "20", "--kv-dtype", "fp8", "--format", "json"],
    )
    s = json.loads(capsys.readouterr().out)["summary"]
    sized = f"{s['ttft_p95_sized_ms']:,.0f}"
    assert s["ttft_p95_target_ms"] == 2000 and s["ttft_p95_sized_ms"] > 2000
    assert s["meets_targets"] is False
    (targets,) = [a for a in s["traffic_assumptions"] if "TTFT p95" in a]
    assert targets.startswith(
        f"targets TTFT p95 2,000 ms (not reachable at this context: sized for {sized} ms)"
        " and TPOT 200 ms"
    ), targets


def test_worn_nvme_advice_follows_the_drives_chosen(capsys: pytest.CaptureFixture[str]) -> None:
    # The seed's one node writing 10 million conversations × 1 GiB a day fills its four
    # bays with the drive rated for the most writes, Micron 9550 MAX 12.8 TB at 3 DWPD
    # (hardware.json), and still wears it out in 5 years × 153.6 TB ÷ 10,737 TB × 12 ≈
    # 0.86 months (sizing/memory/nvme.py): the advice cannot be to choose 3 DWPD drives, and
    # about 1 month is singular.
    args = [a for a in SEED_ARGS if a != "2000"] + ["10000000"]
    call_command("size", *args)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "rated endurance" in x]
    assert "choose mixed-use" not in line
    assert "about 1 month at this write volume" in line
    assert "4 × Micron 9550 MAX 12.8 TB are already rated for 3 DWPD" in line
    assert "a shared NAS or S3 tier in place of NVMe, or fewer new conversations a day" in line


def report_section(out: str, title: str) -> list[str]:
    """The lines of the text report's section that starts with ``title``, up to the next
    heading (a line without indent)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rest = lines[start + 1 :]
    end = next((i for i, line in enumerate(rest) if line and not line.startswith(" ")), len(rest))
    return [lines[start], *rest[:end]]


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        ([], "give --new-conversations-per-day to size one"),
        (
            ["--new-conversations-per-day", "2000", "--without-nvme-tier"],
            "no NVMe tier asked for (--without-nvme-tier)",
        ),
        # 2 users fit on the 4 GPUs: no tier is sold, and no NVMe tier either.
        (
            ["--new-conversations-per-day", "2000", "--users", "2"],
            "offloading does not pay here, so no NVMe tier is sold",
        ),
    ],
)
def test_text_report_without_an_nvme_tier_prints_no_empty_figures(
    capsys: pytest.CaptureFixture[str], flags: list[str], why: str
) -> None:
    """The seed model on 4 x L4 without new conversations a day (or with the NVMe tier
    turned off, or with no tier sold) has no NVMe tier. The page's NVMe card then reads
    "none" with why (configurator/inquiries/explain/memory.py, nvme_figure): the text says
    the same instead of "0.0 TB" written a day. The L4 has no prefill measurement of its
    own: its TTFT is estimated from the Hopper class with its band (±56 %,
    sizing/data/performance.json families) and the report says so, while the verdict
    rests on that estimate, not on memory alone."""
    args = [a for a in SEED_ARGS if a not in ("--new-conversations-per-day", "2000")]
    args[args.index("rtx-pro-6000-se")] = "l4"
    call_command("size", *args, *flags)
    out = capsys.readouterr().out
    assert report_section(out, "NVMe tier") == ["NVMe tier", f"  none:                  {why}"]
    hit = report_section(out, "What a hit is worth")
    assert re.fullmatch(
        r"  full prefill \(miss\): +[\d.]+ ms to the first token "
        r"\(estimate ±56 %: [\d.]+-[\d.]+ ms\)",
        hit[1],
    )
    # The plan's TP 2 adds that no CPU-tier hit is measured at that TP (same line).
    estimated = (
        "  no single-request prefill measurement on NVIDIA L4 (Ada family): the efficiencies "
        "measured on H100 SXM are applied to its datasheet rates, ±56 %"
    )
    assert any(line.startswith(estimated) for line in hit)
    verdict = "\n".join(report_section(out, "Verdict:"))
    assert "no measured basis" not in verdict.lower()


@pytest.mark.parametrize("command", ["size", "recommend"])
def test_version_names_the_sizing_engine_not_django(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # pyproject.toml's project version, as a quote's footer states it ("sizing 0.1.0").
    with pytest.raises(SystemExit) as exit_info:
        call_command(command, "--version")
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == "sizing 0.1.0"


def test_a_card_no_chassis_takes_is_sized_with_a_line_under_the_bill_of_materials(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # An engineer with 2 × RTX 4090 gets his plan (exit status 0): the chassis takes
    # blower and passive cards only (sizing/hardware/chassis.py), so the node is marked as
    # one the builder does not sell, in the JSON summary and under the bill of materials.
    args = ["--model", "Qwen/Qwen3-8B", "--context", "8192", "--users", "50"]
    args += ["--gpu", "rtx-4090", "--gpus-per-node", "2"]
    call_command("size", *args)
    out = capsys.readouterr().out
    assert report_section(out, "Bill of materials") == [
        "Bill of materials",
        "  not sold:              the GPU rtx-4090 (NVIDIA GeForce RTX 4090, open-air cooling) "
        "does not go into the CHS-SP5-4U8G chassis, which takes blower, passive GPUs only; "
        "the plan above is sized all the same",
        "",
    ]
    assert "Verdict: offloading" in out
    call_command("size", *args, "--format", "json")
    s = json.loads(capsys.readouterr().out)["summary"]
    assert s["node_buildable"] is False and "open-air cooling" in s["node_not_buildable_reason"]
    assert s["ttft_miss_ms"] > 0 and s["cpu_tier_total_gib"] >= 0
    # A sold node has no such section; more GPUs than the chassis has slots stays refused.
    call_command("size", *SEED_ARGS)
    assert "Bill of materials" not in capsys.readouterr().out
    with pytest.raises(CommandError) as err:
        call_command("size", *args[:-1], "10")
    assert err.value.returncode == 2 and "holds at most 8 GPUs per node" in str(err.value)


@pytest.mark.django_db
def test_the_quote_keeps_refusing_a_card_no_chassis_takes(tmp_path: Path) -> None:
    args = ["--model", "Qwen/Qwen3-8B", "--context", "8192", "--users", "50"]
    args += ["--gpu", "rtx-4090", "--gpus-per-node", "2"]
    with pytest.raises(CommandError) as err:
        call_command(
            "quote_pdf", *args, "--customer", "A", "--language", "en",
            "--out", str(tmp_path / "q.pdf"),
        )  # fmt: skip
    assert err.value.returncode == 2 and "open-air cooling" in str(err.value)
    assert not (tmp_path / "q.pdf").exists()
