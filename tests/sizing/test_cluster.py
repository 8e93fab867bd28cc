"""Nodes, router and the shared tier of a multi-node plan."""

from __future__ import annotations

import pytest

from sizing.hardware import catalog
from sizing.layout.cluster import (
    Cluster,
    max_buffer_gb_per_node,
    plan_cluster,
    router_for,
    shared_tier,
)
from sizing.units import GIB

PLATFORM = catalog.platform("epyc-9005-2s")


def _cluster(**given: int | float) -> Cluster:
    """plan_cluster for 4-GPU nodes of TP-1 replicas and the platform's 5,760 GB limit."""
    args: dict[str, int | float] = {
        "replicas_needed": 1,
        "gpus_per_replica": 1,
        "gpus_per_node": 4,
        "users": 1,
        "cpu_tier_gb_total": 0,
        "max_buffer_gb_per_node": 5760,
    }
    args.update(given)
    return plan_cluster(**args)  # type: ignore[arg-type]


def test_max_buffer_per_node_is_slots_less_reserve() -> None:
    # 24 slots × 256 GB (largest catalog DIMM) = 6,144 GB (the figure of the refusal
    # quoted in the traffic issue) less 4 × 96 GB of GPU memory kept in reserve.
    assert max_buffer_gb_per_node(PLATFORM, 4 * 96) == 6144 - 384


def test_one_node_when_replicas_fit() -> None:
    # Seed example: 4 replicas of 1 GPU fill one 4-GPU node; 500 GiB tier ≈ 537 GB.
    c = _cluster(
        replicas_needed=4,
        users=500,
        cpu_tier_gb_total=500 * GIB / 1e9,
    )
    assert (c.nodes, c.replicas, c.cpu_tier_capped) == (1, 4, False)
    assert c.cpu_tier_gb_per_node == pytest.approx(536.87, abs=0.01)
    assert c.needs_router and not c.needs_shared_tier


def test_fifty_thousand_users_spread_over_nodes() -> None:
    # 50,000 conversations of 1 GiB need 53,687 GB of CPU tier (traffic issue: "54,071 GB
    # of host memory" with the reserve). 37 replicas of TP 1 on 4-GPU nodes: 10 nodes,
    # 5,369 GB each, within one node's 5,760 GB.
    c = _cluster(
        replicas_needed=37,
        users=50_000,
        cpu_tier_gb_total=50_000 * GIB / 1e9,
    )
    assert (c.nodes, c.replicas, c.users_per_node) == (10, 40, 5000)
    assert c.cpu_tier_gb_per_node == pytest.approx(5368.7, abs=0.1)
    assert not c.cpu_tier_capped
    assert c.needs_shared_tier


def test_memory_beyond_the_slots_goes_to_the_shared_tier() -> None:
    # The same users on 2 nodes: 26,844 GB each would exceed 5,760 GB, so each node
    # keeps its slots' worth and the shared tier holds the rest.
    c = _cluster(
        replicas_needed=8,
        gpus_per_replica=2,
        gpus_per_node=8,
        users=50_000,
        cpu_tier_gb_total=50_000 * GIB / 1e9,
    )
    assert (c.nodes, c.replicas_per_node) == (2, 4)
    assert c.cpu_tier_capped and c.cpu_tier_gb_per_node == 5760
    one = _cluster(
        replicas_needed=1,
        gpus_per_node=2,
        users=10_000,
        cpu_tier_gb_total=10_000 * GIB / 1e9,
        max_buffer_gb_per_node=5952,
    )
    assert one.nodes == 1 and one.needs_shared_tier


def test_shared_tier_capacity_and_bandwidth() -> None:
    c = _cluster(
        replicas_needed=37,
        users=50_000,
        cpu_tier_gb_total=53_687,
    )
    # 50,000 × 1 GiB = 53.7 TB. Per node: 2 returns/s, 10 % of them only in the shared
    # tier, 0.5 GiB each → 0.107 GB/s read; 1 GiB/s of new KV written → 1.074 GB/s.
    tier = shared_tier(
        cluster=c,
        users=50_000,
        conversation_bytes=GIB,
        returns_per_s_per_node=2.0,
        shared_hit_share=0.1,
        reload_bytes_per_return=GIB / 2,
        new_kv_bytes_per_s_per_node=GIB,
    )
    assert tier is not None
    assert tier.capacity_tb == pytest.approx(53.687, abs=0.001)
    assert tier.read_gbps_per_node == pytest.approx(0.1074, abs=1e-4)
    assert tier.write_gbps_per_node == pytest.approx(1.0737, abs=1e-4)
    assert tier.gbps_per_node == tier.write_gbps_per_node
    assert tier.gbps_total == pytest.approx(10 * (0.1074 + 1.0737), abs=1e-3)


def test_no_shared_tier_on_one_node_that_holds_everyone() -> None:
    c = _cluster(
        replicas_needed=2,
        gpus_per_replica=2,
        users=500,
        cpu_tier_gb_total=537,
    )
    kwargs = dict(
        users=500,
        conversation_bytes=GIB,
        returns_per_s_per_node=1.0,
        shared_hit_share=0.0,
        reload_bytes_per_return=GIB,
        new_kv_bytes_per_s_per_node=0.0,
    )
    assert shared_tier(cluster=c, **kwargs) is None  # type: ignore[arg-type]


def test_router_per_engine_and_bad_input() -> None:
    assert "--router-mode kv" in router_for("dynamo").command
    assert "--routing-logic session" in router_for("vllm").command
    with pytest.raises(ValueError, match="engine must be one of"):
        router_for("tgi")
    with pytest.raises(ValueError, match="do not fill"):
        _cluster(
            replicas_needed=1,
            gpus_per_replica=3,
            users=1,
            cpu_tier_gb_total=0,
            max_buffer_gb_per_node=1,
        )
    with pytest.raises(ValueError, match="more than 512"):
        _cluster(
            replicas_needed=10_000,
            users=1,
            cpu_tier_gb_total=0,
            max_buffer_gb_per_node=1,
        )


def test_pipeline_replicas_come_in_node_groups() -> None:
    # A replica of TP 8 × PP 2 spans two 8-GPU nodes: 3 replicas need 6 nodes, and the
    # CPU tier is spread over all six.
    c = _cluster(
        replicas_needed=3,
        gpus_per_replica=8,
        gpus_per_node=8,
        users=600,
        cpu_tier_gb_total=600,
        pipeline_nodes=2,
    )
    assert (c.nodes, c.replicas) == (6, 3)
    assert c.cpu_tier_gb_per_node == pytest.approx(100)
