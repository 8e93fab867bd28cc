"""Dynamo KVBM: ``DYN_KVBM_*_CACHE_GB`` read back as decimal GB for the whole instance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sizing.engines import dynamo
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, make_plan
from sizing.units import GB
from tests.engine_bundle import (
    PLANS,
    SHARED,
    files_of,
    notes_of,
    option,
    parse_script,
    run_with_stubs,
    scripts,
)
from tests.factories import plan_request


def instance_bytes(env: dict[str, str]) -> float:
    """Host bytes of one KVBM leader.

    kvbm 1.5.1/1.6.1 (engine_flags.md §4.1, ``leader.rs``): ``cache_size_in_gb ×
    1_000_000_000`` for all TP workers of the engine together (not per worker).
    """
    return float(env["DYN_KVBM_CPU_CACHE_GB"]) * GB


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("shared", SHARED)
def test_buffer_equals_plan(plan_name: str, shared: str) -> None:
    plan = PLANS[plan_name]()
    d, files = files_of(plan, "dynamo", shared)
    workers = [f for f in scripts(files, "serve.sh") if "/dynamo/" in f.path]
    if d.multi_node:
        # No confirmed multi-node KVBM launch: no scripts, a sentence instead.
        assert not workers
        assert any("no scripts" in n for n in notes_of(plan, "dynamo", shared))
        return
    assert len(workers) == len(d.heads)
    emitted = sum(instance_bytes(parse_script(f.text)[0]) for f in workers)
    planned = plan.cpu_tier.total_gib * 2**30
    # Rounding: up to 0.001 GB per instance (sizing/engines/dynamo.py).
    assert planned - 1 <= emitted <= planned + len(workers) * 1e6


@pytest.mark.parametrize("plan_name", sorted(PLANS))
def test_tier_order_disk_cpu_gpu(plan_name: str) -> None:
    # Dynamo KVBM guide: DYN_KVBM_DISK_CACHE_GB >= DYN_KVBM_CPU_CACHE_GB >= GPU KV.
    d, files = files_of(PLANS[plan_name](), "dynamo")
    for f in scripts(files, "serve.sh"):
        env = parse_script(f.text)[0]
        cpu = float(env["DYN_KVBM_CPU_CACHE_GB"])
        assert cpu * GB > d.gpu_kv_bytes_per_instance
        if "DYN_KVBM_DISK_CACHE_GB" in env:
            assert float(env["DYN_KVBM_DISK_CACHE_GB"]) >= cpu
            assert env["DYN_KVBM_DISK_CACHE_DIR"].startswith(d.tiers.nvme_mount)


def test_never_disables_o_direct_and_ports_differ() -> None:
    _d, files = files_of(PLANS["llama70b-tp2"](), "dynamo")
    text = "".join(f.text for f in files)
    # Any value of this variable disables O_DIRECT (storage/disk.rs: env::var(..).is_ok()).
    assert "DYN_KVBM_DISK_DISABLE_O_DIRECT" not in text
    ports = [
        parse_script(f.text)[0]["DYN_KVBM_LEADER_ZMQ_PUB_PORT"] for f in scripts(files, "serve.sh")
    ]
    assert len(set(ports)) == len(ports)


def test_connector_and_frontend() -> None:
    _d, files = files_of(PLANS["seed"](), "dynamo")
    argv = parse_script(scripts(files, "serve.sh")[0].text)[1]
    assert argv[:3] == ["python", "-m", "dynamo.vllm"]
    assert "--connector" not in argv  # rejected by dynamo.vllm 1.5.1 and 1.6.1
    config = json.loads(option(argv, "--kv-transfer-config") or "")
    assert config["kv_connector"] == "DynamoConnector"
    assert config["kv_connector_module_path"] == "kvbm.vllm_integration.connector"
    frontend = parse_script(scripts(files, "frontend.sh")[0].text)[1]
    assert frontend[:3] == ["python", "-m", "dynamo.frontend"]
    assert option(frontend, "--router-mode") == "kv"


@pytest.mark.parametrize("shared", ["nfs", "s3"])
def test_shared_tier_is_refused_in_words(shared: str) -> None:
    _d, files = files_of(PLANS["seed"](), "dynamo", shared)
    text = "".join(f.text for f in files)
    # No mount, no bucket, no remote variable: released KVBM cannot use them.
    assert "/mnt/kvshared" not in text
    assert "s3://" not in text and "REMOTE" not in text
    assert not [f.path for f in files if "mount-shared" in f.path or f.path.startswith("shared/")]
    notes = notes_of(PLANS["seed"](), "dynamo", shared)
    assert any("has no shared S3 or NFS tier" in n for n in notes)


def _b200_deepseek() -> Plan:
    """DeepSeek-V3, 32,768 tokens, 1,000 users on 8 × B200 per node: one TP-8 instance
    per node on several nodes (the MLA target bundle)."""
    return make_plan(
        plan_request(
            model=from_catalog("deepseek-ai/DeepSeek-V3"),
            context_tokens=32768,
            users=1000,
            gpu="b200",
            gpus_per_node=8,
            kv_dtype="auto",
        )
    )


@pytest.mark.parametrize("shared", ["none", "nfs"])
def test_dynamo_discovers_through_files_it_can_reach(shared: str, tmp_path: Path) -> None:
    """Dynamo 1.6.1 defaults to etcd (runtime_args.py --discovery-backend), which nothing
    starts: every process runs with file discovery under one DYN_FILE_KV. One node: a
    local directory. Several nodes: the NFS tier's directory (then the mount script is
    in the bundle), or the scripts stop until the engineer names a shared one."""
    d, files = files_of(PLANS["seed"](), "dynamo", shared)
    for f in scripts(files, "frontend.sh") + scripts(files, "serve.sh"):
        env, argv = parse_script(f.text)
        assert option(argv, "--discovery-backend") == "file", f.path
        assert env["DYN_FILE_KV"] == dynamo.DISCOVERY_DIR, f.path
    plan = _b200_deepseek()
    d, files = files_of(plan, "dynamo", shared)
    assert len(d.nodes) > 1
    workers = scripts(files, "serve.sh")
    assert {f.path.split("/")[0] for f in workers} == {f"node{n}" for n in d.nodes}
    if shared == "nfs":
        assert scripts(files, "mount-shared.sh")
        for f in workers:
            assert parse_script(f.text)[0]["DYN_FILE_KV"].startswith(d.tiers.nfs_mount)
    else:
        result, calls = run_with_stubs(workers[-1].text, tmp_path)
        assert result.returncode == 1 and calls == [] and "DYN_FILE_KV" in result.stderr
        shared_dir = str(tmp_path / "shared")
        result, calls = run_with_stubs(workers[-1].text, tmp_path, env={"DYN_FILE_KV": shared_dir})
        assert result.returncode == 0 and calls[-1][:3] == ["python", "-m", "dynamo.vllm"]
