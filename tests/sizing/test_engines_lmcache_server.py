"""LMCache multiprocess server: ``--l1-size-gb`` read back as GiB for the whole server."""

from __future__ import annotations

import json

import pytest

from sizing.units import GIB
from tests.engine_bundle import PLANS, SHARED, files_of, option, options, parse_script, scripts


def server_bytes(argv: list[str]) -> float:
    """L1 bytes of one ``lmcache server``.

    LMCache 0.5.6 (engine_flags.md §2.2): ``--l1-size-gb`` × 2^30 (GiB despite the name)
    for the whole server, whatever the TP size of the connected engines.
    """
    return float(option(argv, "--l1-size-gb") or 0) * GIB


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("shared", SHARED)
def test_buffer_equals_plan(plan_name: str, shared: str) -> None:
    plan = PLANS[plan_name]()
    d, files = files_of(plan, "lmcache-server", shared)
    servers = scripts(files, "lmcache-server.sh")
    assert len(servers) == len(d.slots)
    emitted = sum(server_bytes(parse_script(f.text)[1]) for f in servers)
    planned = plan.cpu_tier.total_gib * GIB
    # Rounding: up to 0.01 GiB per server (sizing/engines/lmcache_server.py). With MLA
    # only each stage's first rank writes, one copy of the latent
    # (vllm_multi_process_adapter.py ParallelStrategy): the servers pin less than the
    # plan's tier; that they hold its conversations is tests/sizing/test_tier_conversations.py.
    if plan.request.model.architecture.uses_mla:
        copies = plan.parallelism.tensor_parallel_size
        assert emitted <= planned / copies + len(servers) * 0.01 * GIB
    else:
        assert planned - 1 <= emitted <= planned + len(servers) * 0.01 * GIB


def test_server_and_connector_agree() -> None:
    _d, files = files_of(PLANS["seed"](), "lmcache-server", "nfs")
    for server, serve in zip(
        scripts(files, "lmcache-server.sh"), scripts(files, "serve.sh"), strict=True
    ):
        sargv = parse_script(server.text)[1]
        extra = json.loads(option(parse_script(serve.text)[1], "--kv-transfer-config") or "")
        assert extra["kv_connector"] == "LMCacheMPConnector"
        conf = extra["kv_connector_extra_config"]
        assert conf["lmcache.mp.port"] == int(option(sargv, "--port") or 0)
        assert conf["lmcache.mp.hash_algorithm"] == option(sargv, "--hash-algorithm")
        # --l1-size-gb requires --eviction-policy (lmcache/v1/distributed/config.py).
        assert option(sargv, "--eviction-policy") == "LRU"
        # The size of --kv-offloading-size is ignored with the lmcache backend: never emitted.
        assert "--kv-offloading-size" not in parse_script(serve.text)[1]


def test_l2_adapters() -> None:
    d, files = files_of(PLANS["seed"](), "lmcache-server", "s3")
    adapters = [
        json.loads(a)
        for a in options(
            parse_script(scripts(files, "lmcache-server.sh")[0].text)[1], "--l2-adapter"
        )
    ]
    assert [a["type"] for a in adapters] == ["fs_native", "s3"]
    assert adapters[0]["base_path"].startswith(d.tiers.nvme_mount)
    assert adapters[0]["eviction"] == {"eviction_policy": "LRU"}
    # max_capacity_gb is GiB: the plan's NVMe share of one instance.
    assert adapters[0]["max_capacity_gb"] * GIB == pytest.approx(
        d.nvme_bytes_per_instance, abs=0.01 * GIB
    )
    assert adapters[1]["shared"] is True
    assert adapters[1]["s3_endpoint"] == f"s3://{d.tiers.s3_bucket}.{d.tiers.s3_endpoint}"


def test_ports_are_unique_per_node() -> None:
    _d, files = files_of(PLANS["llama70b-tp2"](), "lmcache-server")
    ports = [option(parse_script(f.text)[1], "--port") for f in scripts(files, "lmcache-server.sh")]
    assert len(set(ports)) == len(ports)
