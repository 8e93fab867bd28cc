"""The bundle follows the plan's pipeline, data and expert parallelism.

Plans: ``tests/engine_bundle.pp_plan`` (DeepSeek-V3, FP8 cache, 8 × H100 SXM per node)
and ``ep_plan`` (Qwen3-30B-A3B with expert parallel on 4 GPUs). Each value is read
back with the engine's own semantics (engine_flags.md; the flag sources recorded in
``sizing/data/engine_flags.json`` under ``parallel_source``).
"""

from __future__ import annotations

import json

import pytest

from sizing.engines import deployment
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.traffic.profile import Traffic
from sizing.units import GB, GIB
from tests.engine_bundle import (
    FLAGS,
    PLANS,
    files_of,
    notes_of,
    option,
    parse_script,
    scripts,
    values,
)
from tests.factories import plan_request
from tests.sizing.test_engines_vllm import host_bytes


def test_the_pp_plan_is_pipeline_parallel_over_two_nodes() -> None:
    # sizing/plan/layout_choice.py: 8 × H100 cannot hold DeepSeek-V3's weights at TP 8, so PP 2 over
    # two nodes; one replica (DESIGN.md §3.2 budget rule, MAX_PIPELINE_NODES).
    par = PLANS["deepseek-v3-pp2"]().parallelism
    assert (par.tensor_parallel_size, par.pipeline_parallel_size, par.nodes) == (8, 2, 2)
    assert par.total_replicas == 1


def test_the_ep_plan_has_four_data_parallel_ranks() -> None:
    # sizing/plan/layout_choice.py: expert_parallel on 4 GPUs gives EP 4 = TP 1 × DP 4.
    par = PLANS["qwen3-moe-ep4"]().parallelism
    assert (par.tensor_parallel_size, par.expert_parallel_size) == (1, 4)
    assert par.data_parallel_size == 4 and par.pipeline_parallel_size == 1


def test_pp_deployment_places_one_stage_per_node() -> None:
    plan = PLANS["deepseek-v3-pp2"]()
    d = deployment.from_plan(plan)
    assert d.world_size == 16 and len(d.heads) == 1
    assert [(s.node, s.stage, s.worker_ranks[0], s.worker_ranks[-1]) for s in d.slots] == [
        (1, 0, 0, 7),
        (2, 1, 8, 15),
    ]  # vLLM rank order DP × PP × TP: stage k holds ranks 8k … 8k+7
    # GPU KV of the instance: the plan's per-card budget on all 16 cards.
    per_gpu = plan.parallelism.kv_cache_gib_per_gpu
    assert d.gpu_kv_bytes_per_instance == pytest.approx(per_gpu * 16 * GIB, abs=1)
    # Each node's workers hold half of the instance's CPU tier.
    assert d.cpu_bytes_on_node(d.slots[1]) == pytest.approx(d.cpu_bytes_per_instance / 2)


def test_vllm_pp_launch_head_and_headless() -> None:
    d, files = files_of(PLANS["deepseek-v3-pp2"](), "vllm")
    head_env, head = parse_script(
        next(f.text for f in files if f.path.startswith("node1/vllm/instance0/serve.sh"))
    )
    tail_env, tail = parse_script(
        next(f.text for f in files if f.path.startswith("node2/vllm/instance0/serve.sh"))
    )
    for argv, rank in ((head, "0"), (tail, "1")):
        assert option(argv, "--pipeline-parallel-size") == "2"
        assert option(argv, "--tensor-parallel-size") == "8"
        assert option(argv, "--nnodes") == "2" and option(argv, "--node-rank") == rank
        assert option(argv, "--master-addr") == "node1"
        # Cards 0-3 on socket 0, 4-7 on socket 1 (sizing/engines/placement.py).
        assert values(argv, "--numa-bind-nodes") == ["0", "0", "0", "0", "1", "1", "1", "1"]
    assert "--headless" not in head and option(head, "--port") == "8100"
    assert "--headless" in tail and "--port" not in tail
    assert head_env["CUDA_VISIBLE_DEVICES"] == tail_env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    # Both nodes carry the same connector config: workers read it from their own node.
    assert option(head, "--kv-transfer-config") == option(tail, "--kv-transfer-config")
    # Per node: half of cpu_bytes_to_use (engine_flags.md §1.2, total over TP × PP).
    total = json.loads(option(head, "--kv-transfer-config") or "")["kv_connector_extra_config"][
        "cpu_bytes_to_use"
    ]
    assert host_bytes(head) == host_bytes(tail) == total / 2
    assert total >= d.cpu_bytes_per_instance


def test_sglang_pp_launch() -> None:
    _d, files = files_of(PLANS["deepseek-v3-pp2"](), "sglang")
    for node in (1, 2):
        argv = parse_script(
            next(f.text for f in files if f.path == f"node{node}/sglang/instance0/serve.sh")
        )[1]
        assert option(argv, "--pp-size") == "2" and option(argv, "--nnodes") == "2"
        assert option(argv, "--node-rank") == str(node - 1)
        assert option(argv, "--dist-init-addr") == "node1:25000"
        assert values(argv, "--numa-node") == ["0", "0", "0", "0", "1", "1", "1", "1"]


def test_pp_dynamo_says_what_to_set_by_hand() -> None:
    plan = PLANS["deepseek-v3-pp2"]()
    _d, files = files_of(plan, "dynamo")
    assert not [f for f in files if "/dynamo/" in f.path]
    note = next(n for n in notes_of(plan, "dynamo") if "spanning 2 nodes" in n)
    assert "--headless" in note and "DYN_KVBM_CPU_CACHE_GB" in note


def test_pp_topology_check_on_every_node() -> None:
    _d, files = files_of(PLANS["deepseek-v3-pp2"](), "vllm")
    for node in (1, 2):
        check = next(f.text for f in files if f.path == f"node{node}/check-topology.sh")
        assert "check 0 0" in check and "check 7 1" in check


def test_vllm_ep_runs_one_process_per_data_parallel_rank() -> None:
    d, files = files_of(PLANS["qwen3-moe-ep4"](), "vllm")
    serves = scripts(files, "serve.sh")
    parsed = [parse_script(f.text) for f in serves]
    assert [option(a, "--data-parallel-rank") for _e, a in parsed] == ["0", "1", "2", "3"]
    for rank, (env, argv) in enumerate(parsed):
        assert option(argv, "--data-parallel-size") == "4"
        assert "--enable-expert-parallel" in argv
        assert env["CUDA_VISIBLE_DEVICES"] == str(rank)
        # One DP rank per process: host bytes = cpu_bytes_to_use (engine_flags.md §1.2).
        assert host_bytes(argv) == d.cpu_bytes_per_instance
    ports = [option(a, "--port") for _e, a in parsed]
    assert len(set(ports)) == 4
    # Cards 0,1 on socket 0 and 2,3 on socket 1: one numactl per rank.
    assert ["--cpunodebind=0" in f.text for f in serves] == [True, True, False, False]
    router = parse_script(scripts(files, "vllm-router.sh")[0].text)[1]
    assert len((option(router, "--static-backends") or "").split(",")) == 4


def test_sglang_ep_is_one_server_with_attention_dp() -> None:
    plan = PLANS["qwen3-moe-ep4"]()
    d, files = files_of(plan, "sglang")
    (serve,) = scripts(files, "serve.sh")
    env, argv = parse_script(serve.text)
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert option(argv, "--tp-size") == "4" and option(argv, "--attn-dp-size") == "4"
    assert option(argv, "--ep-size") == "4"
    # 150 GiB per rank (plan: 600 GiB over 4 ranks) = 161.06 GB -> 162 whole GB per rank.
    assert plan.cpu_tier.per_instance_gib == pytest.approx(150.0)
    assert option(argv, "--hicache-size") == "162"
    assert int(option(argv, "--hicache-size") or 0) * GB * 4 >= d.total_cpu_bytes


def test_dynamo_ep_runs_one_worker_per_rank() -> None:
    d, files = files_of(PLANS["qwen3-moe-ep4"](), "dynamo")
    workers = [parse_script(f.text) for f in scripts(files, "serve.sh")]
    assert [option(a, "--data-parallel-rank") for _e, a in workers] == ["0", "1", "2", "3"]
    assert all("--enable-expert-parallel" in a for _e, a in workers)
    pub = {e["DYN_KVBM_LEADER_ZMQ_PUB_PORT"] for e, _a in workers}
    assert len(pub) == 4  # one KVBM leader per rank, each with its own ports
    # kvbm leader.rs: GB (10^9) per engine, here one rank of TP 1.
    for env, _a in workers:
        assert float(env["DYN_KVBM_CPU_CACHE_GB"]) * GB == pytest.approx(
            d.cpu_bytes_per_instance, abs=1e6
        )


def test_ep_with_pp_is_not_launched_but_explained() -> None:
    # DeepSeek-V3 with expert parallel on 8 × H100: EP 8 × PP 2, DP ranks spanning
    # nodes (sizing/plan/layout_choice.py), which no confirmed launch places on their GPUs. The 300
    # users of 1,000 active in the busiest hour exceed the 208 conversations on the GPUs
    # of two nodes, so the plan has a CPU tier.
    plan = make_plan(
        plan_request(
            model=from_catalog("deepseek-ai/DeepSeek-V3"),
            context_tokens=32768,
            users=1000,
            gpu="h100-sxm",
            gpus_per_node=8,
            expert_parallel=True,
            traffic=Traffic(busy_hour_active_share=0.3),
        )
    )
    par = plan.parallelism
    assert par.pipeline_parallel_size == 2 and par.data_parallel_size > 1
    assert plan.cpu_tier.per_instance_gib > 0
    for engine in ("vllm", "lmcache", "lmcache-server", "sglang", "dynamo"):
        _d, files = files_of(plan, engine)
        assert not [f for f in files if f.path.endswith("serve.sh")], engine
        notes = notes_of(plan, engine)
        assert any("no scripts for this layout" in n and "by hand" in n for n in notes), engine


@pytest.mark.parametrize(
    ("engine", "version", "group", "names"),
    [
        ("vllm", "0.31.0", "cli", ["--nnodes", "--headless", "--enable-expert-parallel"]),
        ("vllm", "0.33.0", "cli", ["--numa-bind-nodes", "--data-parallel-rank"]),
        ("sglang", "0.5.22", "cli", ["--pp-size", "--dist-init-addr", "--attn-dp-size"]),
        ("sglang", "0.5.23", "cli", ["--ep-size", "--numa-node", "--node-rank"]),
        ("dynamo", "1.5.1", "worker_cli", ["--data-parallel-rank", "--enable-expert-parallel"]),
        ("dynamo", "1.6.1", "worker_cli", ["--headless", "--numa-bind"]),
    ],
)
def test_parallel_flags_are_recorded_with_a_source(
    engine: str, version: str, group: str, names: list[str]
) -> None:
    entry = FLAGS[engine][version]
    assert set(names) <= set(entry[group])
    assert "wheel" in entry["parallel_source"]
