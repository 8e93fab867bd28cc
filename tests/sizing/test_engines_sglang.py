"""SGLang HiCache: ``--hicache-size`` read back as whole GB per rank."""

from __future__ import annotations

import json
import pathlib

import pytest

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


def ranks_on_node(argv: list[str]) -> int:
    """Ranks one ``sglang.launch_server`` runs on its node: ``--tp-size`` × ``--pp-size``
    GPUs over ``--nnodes`` nodes (SGLang places one PP stage per node; the attention
    DP groups of ``--attn-dp-size`` are inside the TP group)."""
    ranks = int(option(argv, "--tp-size", "1") or 1) * int(option(argv, "--pp-size", "1") or 1)
    return ranks // int(option(argv, "--nnodes", "1") or 1)


def instance_bytes(argv: list[str]) -> int:
    """Host pool bytes of one ``sglang.launch_server`` on its node.

    SGLang 0.5.22/0.5.23 (engine_flags.md §3, ``mem_cache/pool_host/base.py``):
    ``--hicache-size`` is an integer, × 10^9 bytes, per rank.
    """
    size = option(argv, "--hicache-size")
    assert size is not None and size.isdigit(), "--hicache-size must be an integer"
    return int(size) * GB * ranks_on_node(argv)


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("shared", SHARED)
def test_buffer_equals_plan(plan_name: str, shared: str) -> None:
    plan = PLANS[plan_name]()
    d, files = files_of(plan, "sglang", shared)
    serves = scripts(files, "serve.sh")
    # One server per slot; the data-parallel ranks of a node share one server.
    assert len(serves) == (len(d.nodes) if d.data_parallel_size > 1 else len(d.slots))
    emitted = sum(instance_bytes(parse_script(f.text)[1]) for f in serves)
    planned = plan.cpu_tier.total_gib * 2**30
    ranks = sum(ranks_on_node(parse_script(f.text)[1]) for f in serves)
    # Rounding: up to one whole GB per rank (sizing/engines/sglang.py).
    assert planned <= emitted < planned + ranks * GB


def test_seed_is_135_gb_per_rank() -> None:
    # 125 GiB = 134.22 GB per TP-1 instance (sizing article) -> 135 whole GB.
    _d, files = files_of(PLANS["seed"](), "sglang")
    argv = parse_script(scripts(files, "serve.sh")[0].text)[1]
    assert option(argv, "--hicache-size") == "135"
    assert "--enable-hierarchical-cache" in argv
    assert option(argv, "--kv-cache-dtype") == "fp8_e4m3"


def test_storage_backends() -> None:
    d, files = files_of(PLANS["seed"](), "sglang")
    argv = parse_script(scripts(files, "serve.sh")[0].text)[1]
    assert option(argv, "--hicache-storage-backend") == "file"
    extra = json.loads(option(argv, "--hicache-storage-backend-extra-config") or "")
    assert extra["file_storage_path"].startswith(d.tiers.nvme_mount)
    assert extra["max_size"].endswith("G") and extra["max_size"][:-1].isdigit()
    d, files = files_of(PLANS["seed"](), "sglang", "nfs")
    extra = json.loads(
        option(
            parse_script(scripts(files, "serve.sh")[0].text)[1],
            "--hicache-storage-backend-extra-config",
        )
        or ""
    )
    assert extra == {
        "file_storage_path": f"{d.tiers.nfs_mount}/hicache",
        "enable_metadata_cache": True,
    }
    assert any("one storage backend" in n for n in notes_of(PLANS["seed"](), "sglang", "nfs"))
    _d, files = files_of(PLANS["seed-cpu-only"](), "sglang")
    assert "--hicache-storage-backend" not in parse_script(scripts(files, "serve.sh")[0].text)[1]


def test_every_sglang_server_requires_the_shared_key(tmp_path: pathlib.Path) -> None:
    """SGLang listens on 0.0.0.0 and checks --api-key (arg_groups/fields/serving.py,
    0.5.23): the script stops without the key and passes it as one argument."""
    _d, files = files_of(PLANS["seed"](), "sglang")
    for f in scripts(files, "serve.sh"):
        result, calls = run_with_stubs(f.text, tmp_path)
        assert result.returncode == 1 and calls == [], f.path
        result, calls = run_with_stubs(f.text, tmp_path, env={"VLLM_API_KEY": "a key"})
        assert result.returncode == 0, f.path
        argv = calls[-1]
        assert argv[argv.index("--api-key") + 1] == "a key"
