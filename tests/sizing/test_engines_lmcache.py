"""LMCache in-process: the YAML read back with LMCache's per-worker GiB semantics."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.units import GIB
from tests.engine_bundle import PLANS, SHARED, files_of, option, parse_script, scripts
from tests.factories import plan_request


def instance_bytes(yaml_text: str, serve_text: str) -> float:
    """Pinned bytes of one instance.

    LMCache 0.5.6 (engine_flags.md §2.1): one LMCache engine per vLLM worker,
    ``max_local_cpu_size`` in GiB (× 1024³) per worker; the workers of one node are
    TP × PP / ``--nnodes`` (vLLM runs one pipeline stage per node).
    """
    doc = yaml.safe_load(yaml_text)
    argv = parse_script(serve_text)[1]
    workers = int(option(argv, "--tensor-parallel-size", "1") or 1) * int(
        option(argv, "--pipeline-parallel-size", "1") or 1
    )
    workers //= int(option(argv, "--nnodes", "1") or 1)
    return float(doc["max_local_cpu_size"]) * GIB * workers


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("shared", SHARED)
def test_buffer_equals_plan(plan_name: str, shared: str) -> None:
    plan = PLANS[plan_name]()
    d, files = files_of(plan, "lmcache", shared)
    yamls = scripts(files, "lmcache.yaml")
    serves = scripts(files, "serve.sh")
    assert len(yamls) == len(serves) == len(d.slots)
    emitted = sum(instance_bytes(y.text, s.text) for y, s in zip(yamls, serves, strict=True))
    planned = plan.cpu_tier.total_gib * GIB
    # Rounding: up to 0.01 GiB per worker (sizing/engines/lmcache.py). Each node's workers
    # keep their own stage's layers, so with stages of unequal size (DeepSeek-V3: 31 and
    # 30 layers) they pin less than the plan's tier, which sizes every rank like the
    # fullest; that they hold its conversations is tests/sizing/test_tier_conversations.py.
    slack = len(d.heads) * d.world_size * 0.01 * GIB
    assert emitted <= planned + slack
    if plan.parallelism.pipeline_parallel_size == 1:
        assert planned - 1 <= emitted


def test_tp2_halves_the_per_worker_value() -> None:
    # 750 GiB per TP-2 instance (plan of tests/engine_bundle.tp2_plan) -> 375 GiB per worker.
    _d, files = files_of(PLANS["llama70b-tp2"](), "lmcache")
    assert yaml.safe_load(scripts(files, "lmcache.yaml")[0].text)["max_local_cpu_size"] == 375.0


def test_vllm_side_and_config_file() -> None:
    _d, files = files_of(PLANS["seed"](), "lmcache")
    serve = scripts(files, "serve.sh")[0]
    env, argv = parse_script(serve.text)
    assert env["LMCACHE_CONFIG_FILE"] == "$HERE/lmcache.yaml"
    assert pathlib.PurePosixPath(serve.path).with_name("lmcache.yaml").as_posix() in {
        f.path for f in files
    }
    assert '"kv_connector":"LMCacheConnectorV1"' in (option(argv, "--kv-transfer-config") or "")


def test_disk_tier_is_on_only_with_both_keys() -> None:
    # engine_flags.md §2.1: the disk tier needs local_disk AND max_local_disk_size > 0.
    for plan_name in PLANS:
        _d, files = files_of(PLANS[plan_name](), "lmcache")
        for f in scripts(files, "lmcache.yaml"):
            doc = yaml.safe_load(f.text)
            assert ("local_disk" in doc) == (doc.get("max_local_disk_size", 0) > 0)


def test_shared_tiers() -> None:
    d, files = files_of(PLANS["seed"](), "lmcache", "s3")
    doc = yaml.safe_load(scripts(files, "lmcache.yaml")[0].text)
    # S3 has no plugin form in 0.5.6: remote_url s3://<bucket>.<host> plus s3_region.
    assert doc["remote_url"] == f"s3://{d.tiers.s3_bucket}.{d.tiers.s3_endpoint}"
    assert doc["extra_config"]["s3_region"] == d.tiers.s3_region
    d, files = files_of(PLANS["seed"](), "lmcache", "nfs")
    doc = yaml.safe_load(scripts(files, "lmcache.yaml")[0].text)
    assert doc["remote_storage_plugins"] == ["fs"]
    assert doc["extra_config"]["remote_storage_plugin.fs.base_path"].startswith(d.tiers.nfs_mount)
    seeds = {parse_script(f.text)[0]["PYTHONHASHSEED"] for f in scripts(files, "serve.sh")}
    assert seeds == {str(d.tiers.python_hash_seed)}


def test_mla_other_ranks_pin_one_chunk() -> None:
    """DeepSeek-V3 (MLA) on 8 × B200, 16-bit cache: LMCache 0.5.6 saves on the first
    rank only, which allocates first_rank_max_local_cpu_size; every other rank allocates
    max_local_cpu_size (cache_engine.py _Create_memory_allocator) and the CPU backend
    needs it above 0 (storage_backend/__init__.py). The other ranks get one 256-token
    chunk of the latent: 61 layers × (512 + 64) × 2 bytes = 70,272 bytes a token,
    17,989,632 bytes a chunk = 0.0168 GiB, 0.02 rounded up."""
    plan = make_plan(
        plan_request(
            model=from_catalog("deepseek-ai/DeepSeek-V3"),
            context_tokens=32768,
            users=1000,
            gpu="b200",
            gpus_per_node=8,
            kv_dtype="auto",
        )
    )
    d, files = files_of(plan, "lmcache")
    assert d.ranks.lmcache_first_rank_only
    for f in scripts(files, "lmcache.yaml"):
        doc = yaml.safe_load(f.text)
        extra = doc["extra_config"]
        assert extra["save_only_first_rank"] is True
        assert doc["max_local_cpu_size"] == 0.02
        tier_gib = d.rank_tier_bytes() / GIB
        assert tier_gib <= extra["first_rank_max_local_cpu_size"] < tier_gib + 0.01
