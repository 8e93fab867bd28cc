"""vLLM native offloading: the emitted buffer read back with vLLM's own semantics."""

from __future__ import annotations

import json

import pytest

from sizing.units import GIB
from tests.engine_bundle import PLANS, SHARED, files_of, notes_of, option, parse_script, scripts


def host_bytes(argv: list[str]) -> float:
    """Pinned bytes one ``vllm serve`` process allocates on its node for offloading.

    vLLM 0.31/0.33 (engine_flags.md §1.1-1.2; ``vllm/config/parallel.py``):
    ``cpu_bytes_to_use`` is the total over one engine's TP × PP workers, and every
    worker allocates its ``1/(TP × PP)``; a node of a ``--nnodes`` launch runs
    ``1/nnodes_within_dp`` of them. Each DP rank allocates its own region: the process
    runs ``--data-parallel-size`` ranks, or one with ``--data-parallel-rank``.
    """
    config = json.loads(option(argv, "--kv-transfer-config") or "{}")
    total = int(config["kv_connector_extra_config"]["cpu_bytes_to_use"])
    dp = int(option(argv, "--data-parallel-size", "1") or 1)
    dp_local = 1 if "--data-parallel-rank" in argv else dp
    nnodes = int(option(argv, "--nnodes", "1") or 1)
    nnodes_within_dp = max(nnodes // (dp // dp_local), 1)
    return total * dp_local / nnodes_within_dp


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("shared", SHARED)
def test_buffer_equals_plan(plan_name: str, shared: str) -> None:
    plan = PLANS[plan_name]()
    d, files = files_of(plan, "vllm", shared)
    serve = scripts(files, "serve.sh")
    assert len(serve) == len(d.slots)
    emitted = sum(host_bytes(parse_script(f.text)[1]) for f in serve)
    planned = plan.cpu_tier.total_gib * GIB
    # Rounding: offload() rounds each instance up to a whole GiB (sizing/memory/vllm_buffer.py).
    assert planned <= emitted < planned + len(serve) * GIB


def test_seed_instance_is_125_gib() -> None:
    # Seed document / docs/sizing.md §4: 125 GiB per instance -> 134,217,728,000 bytes.
    _d, files = files_of(PLANS["seed-cpu-only"](), "vllm")
    env, argv = parse_script(scripts(files, "serve-short.sh")[0].text)
    assert option(argv, "--kv-offloading-size") == "125"
    assert host_bytes(parse_script(scripts(files, "serve.sh")[0].text)[1]) == 134_217_728_000
    assert env["CUDA_VISIBLE_DEVICES"] == "0"


def test_short_form_equals_full_form() -> None:
    _d, files = files_of(PLANS["seed-cpu-only"](), "vllm")
    for short, full in zip(
        scripts(files, "serve-short.sh"), scripts(files, "serve.sh"), strict=True
    ):
        size_gib = float(option(parse_script(short.text)[1], "--kv-offloading-size") or 0)
        # --kv-offloading-size is GiB, total over workers (engine_flags.md §1.1).
        assert size_gib * GIB == host_bytes(parse_script(full.text)[1])
        assert "--kv-transfer-config" not in parse_script(short.text)[1]


def test_nvme_tier_is_fs_on_the_drive_mount() -> None:
    d, files = files_of(PLANS["seed"](), "vllm")
    config = json.loads(
        option(parse_script(scripts(files, "serve.sh")[0].text)[1], "--kv-transfer-config") or ""
    )
    extra = config["kv_connector_extra_config"]
    assert extra["spec_name"] == "TieringOffloadingSpec"
    assert extra["secondary_tiers"][0] == {"type": "fs", "root_dir": f"{d.tiers.nvme_mount}/vllm"}
    assert not scripts(files, "serve-short.sh"), "the short form cannot express the NVMe tier"
    assert any("never deletes" in n for n in notes_of(PLANS["seed"](), "vllm"))


@pytest.mark.parametrize("shared", ["nfs", "s3"])
def test_shared_tier_uses_same_seed_and_hash(shared: str) -> None:
    d, files = files_of(PLANS["seed"](), "vllm", shared)
    seen = {
        (
            parse_script(f.text)[0]["PYTHONHASHSEED"],
            option(parse_script(f.text)[1], "--prefix-caching-hash-algo"),
        )
        for f in scripts(files, "serve.sh")
    }
    assert seen == {(str(d.tiers.python_hash_seed), "sha256")}
    tiers = json.loads(
        option(parse_script(scripts(files, "serve.sh")[0].text)[1], "--kv-transfer-config") or ""
    )["kv_connector_extra_config"]["secondary_tiers"]
    assert tiers[-1]["type"] == ("fs" if shared == "nfs" else "obj")
    if shared == "s3":
        assert tiers[-1]["store_config"]["bucket"] == d.tiers.s3_bucket
    else:
        assert tiers[-1]["root_dir"].startswith(d.tiers.nfs_mount)


def test_no_tier_means_no_offloading_flags() -> None:
    # 100 users fit on four cards (204 conversations, seed §3.2): no tier is sold.
    from sizing.model.spec import from_catalog
    from sizing.plan.orchestrator import make_plan
    from tests.factories import plan_request

    plan = make_plan(
        plan_request(model=from_catalog("Qwen/Qwen3-32B-FP8"), context_tokens=8192, users=100)
    )
    _d, files = files_of(plan, "vllm")
    argv = parse_script(scripts(files, "serve.sh")[0].text)[1]
    assert "--kv-transfer-config" not in argv and "--kv-offloading-size" not in argv
