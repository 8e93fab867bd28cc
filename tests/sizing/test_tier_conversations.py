"""Every engine's CPU tier holds exactly the conversations the plan promises.

One test per engine × layout class: the emitted settings are read back from the bundle's
files with that engine's own semantics (each reader names its source), and the
conversations they hold are counted against what one conversation leaves on each rank,
computed here from the model's layers (``sizing.model.architecture``, vLLM's stage split
``sizing.layout.parallelism.pipeline_stages``). The count must reach the plan's
``cpu_tier.conversations_per_instance``, and one step of the engine's unit less must
not: the setting is the plan's count in that engine's granularity.

Layout classes (plans from the offline catalog, layouts chosen by ``sizing.plan.layout_choice``):

- GQA with TP ≤ KV heads: the seed example (Qwen3-32B-FP8, TP 1) and Llama-3.3-70B at
  TP 2 (8 KV heads);
- GQA with TP > KV heads: Qwen3-235B-A22B (4 KV heads) on 8 × H100 at TP 8, each head on
  two ranks, with a 1,024-token shared prompt;
- MLA: DeepSeek-V3 on 8 × B200 at TP 8, the latent on every rank;
- hybrid: Qwen3-Next-80B-A3B (linear attention, TP 2) and Gemma-3-27B (sliding window);
- PP > 1: Llama-3.1-405B over two nodes (TP 8 × PP 2) and DeepSeek-V3 over two nodes
  (MLA, 31 + 30 layers);
- expert parallel: Qwen3-30B-A3B with four data-parallel ranks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from functools import cache

import pytest
import yaml

from sizing.engines.deployment import BundleFile
from sizing.layout.parallelism import pipeline_stages
from sizing.model.architecture import conversation_bytes, kv_bytes_per_token
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, make_plan
from sizing.traffic.profile import Traffic
from sizing.units import GB, GIB
from tests.engine_bundle import PLANS, SHARED, files_of, notes_of, option, parse_script, scripts
from tests.factories import plan_request


def _plan(**kwargs: object) -> Callable[[], Plan]:
    return lambda: make_plan(plan_request(**kwargs))  # type: ignore[arg-type]


LAYOUTS: dict[str, Callable[[], Plan]] = {
    "gqa-tp1-seed": PLANS["seed"],
    "gqa-tp2": PLANS["llama70b-tp2"],
    "gqa-tp8-over-4-heads": _plan(
        model=from_catalog("Qwen/Qwen3-235B-A22B"),
        context_tokens=8192,
        users=100,
        gpu="h100-sxm",
        gpus_per_node=8,
        kv_dtype="auto",
        shared_prompt_tokens=1024,
    ),
    "mla-tp8": _plan(
        model=from_catalog("deepseek-ai/DeepSeek-V3"),
        context_tokens=8192,
        users=200,
        gpu="b200",
        gpus_per_node=8,
        kv_dtype="auto",
        # Four turns a conversation: with the default eight the GPUs' 145 full-length
        # slots hold 95 % of the returns at their busy-hour length and no tier pays.
        traffic=Traffic(turns=4),
    ),
    "hybrid-linear": _plan(
        model=from_catalog("Qwen/Qwen3-Next-80B-A3B-Instruct"),
        context_tokens=32768,
        users=600,
        kv_dtype="fp8",
    ),
    "hybrid-sliding": _plan(
        model=from_catalog("google/gemma-3-27b-it"),
        context_tokens=32768,
        users=600,
        kv_dtype="auto",
    ),
    "gqa-pp2": _plan(
        model=from_catalog("meta-llama/Llama-3.1-405B-Instruct"),
        context_tokens=16384,
        users=200,
        gpu="h100-sxm",
        gpus_per_node=8,
        kv_dtype="auto",
    ),
    "mla-pp2": PLANS["deepseek-v3-pp2"],
    "expert-parallel": PLANS["qwen3-moe-ep4"],
}


@cache
def plan_of(name: str) -> Plan:
    return LAYOUTS[name]()


def stage_truth(plan: Plan) -> list[tuple[int, int]]:
    """Per pipeline stage: (one conversation without the shared prompt, the prompt) on one
    TP rank, bytes, from the model's layers (KV heads per rank ``max(1, heads // TP)``,
    the MLA latent whole on every rank: ``sizing/model/architecture.py``)."""
    arch = plan.request.model.architecture
    par = plan.parallelism
    kv, ctx, prompt = plan.request.workload.kv_dtype, plan.request.workload.context_tokens, 0
    prompt = plan.request.workload.shared_prompt_tokens
    out = []
    for start, end in pipeline_stages(arch.num_layers, par.pipeline_parallel_size):
        stage = replace(arch, layers=arch.layers[start:end])
        per_token = kv_bytes_per_token(stage, kv, par.tensor_parallel_size)
        whole = conversation_bytes(stage, kv, ctx, par.tensor_parallel_size)
        out.append((whole - per_token * prompt, per_token * prompt))
    return out


def fits(capacity: float, conversation: int, prompt: int) -> int:
    """Whole conversations beside one shared prompt in ``capacity`` bytes."""
    return max(0, int((capacity - prompt) // conversation))


def uses_mla(plan: Plan) -> bool:
    return plan.request.model.architecture.uses_mla


def vllm_held(plan: Plan, files: list[BundleFile], less: int) -> int:
    """vLLM 0.31/0.33 ``vllm/v1/kv_offload/cpu/spec.py``: ``num_blocks = cpu_bytes_to_use //
    (page_bytes × world_size)``, each worker's page of its own heads and layers; an MLA
    latent on one node is stored once (the replicated layout, engine_flags.md §1.2).
    ``less`` GiB are taken off (the short flag's unit)."""
    stages = stage_truth(plan)
    held = []
    for serve in scripts(files, "serve.sh"):
        argv = parse_script(serve.text)[1]
        extra = json.loads(option(argv, "--kv-transfer-config") or "{}")
        cpu = int(extra["kv_connector_extra_config"]["cpu_bytes_to_use"]) - less * GIB
        tp = int(option(argv, "--tensor-parallel-size") or 1)
        pp = int(option(argv, "--pipeline-parallel-size") or 1)
        if uses_mla(plan) and pp == 1:
            held.append(fits(cpu, *stages[0]))
        else:
            held.append(min(fits(cpu / (tp * pp), u, p) for u, p in stages))
    return min(held)


def lmcache_held(plan: Plan, files: list[BundleFile], less: int) -> int:
    """LMCache 0.5.6 in-process (``lmcache/v1/cache_engine.py``): every worker keeps
    ``max_local_cpu_size`` GiB of its own KV; with MLA ``save_only_first_rank`` (default
    true) leaves the tier to worker 0 alone, sized ``first_rank_max_local_cpu_size``, so
    a later pipeline stage would keep nothing. ``less`` × 0.01 GiB are taken off."""
    stages = stage_truth(plan)
    held = []
    for config in scripts(files, "lmcache.yaml"):
        doc = yaml.safe_load(config.text)
        extra = doc.get("extra_config") or {}
        stage = int(config.path.split("/")[0].removeprefix("node")) - 1
        stage %= len(stages)
        cap = float(doc["max_local_cpu_size"])
        if uses_mla(plan) and extra.get("save_only_first_rank", True):
            if len(stages) > 1:
                return 0
            cap = float(extra.get("first_rank_max_local_cpu_size", cap))
        held.append(fits((cap - less / 100) * GIB, *stages[stage]))
    return min(held)


def lmcache_server_held(plan: Plan, files: list[BundleFile], less: int) -> int:
    """LMCache 0.5.6 server (``--l1-size-gb`` × 2^30 for the whole server): each worker
    writes its own piece; with MLA only the first rank of each stage writes, one copy
    (``lmcache/integration/vllm/vllm_multi_process_adapter.py`` ``ParallelStrategy``).
    ``less`` × 0.01 GiB are taken off."""
    stages = stage_truth(plan)
    tp = plan.parallelism.tensor_parallel_size
    copies = 1 if uses_mla(plan) else tp
    held = []
    for server in scripts(files, "lmcache-server.sh"):
        argv = parse_script(server.text)[1]
        l1 = (float(option(argv, "--l1-size-gb") or 0) - less / 100) * GIB
        node = int(server.path.split("/")[0].removeprefix("node"))
        u, p = stages[(node - 1) % len(stages)]
        held.append(fits(l1, copies * u, copies * p))
    return min(held)


def sglang_held(plan: Plan, files: list[BundleFile], less: int) -> int:
    """SGLang 0.5.22/0.5.23: ``--hicache-size`` × 10^9 bytes per rank, each rank its own
    heads, the MLA host pool the whole latent (``MLATokenToKVPoolHost``); PP stages are
    synced to the smallest capacity. ``less`` whole GB are taken off."""
    stages = stage_truth(plan)
    held = []
    for serve in scripts(files, "serve.sh"):
        argv = parse_script(serve.text)[1]
        size = option(argv, "--hicache-size") or ""
        assert size.isdigit(), "--hicache-size is an integer"
        held.append(min(fits((int(size) - less) * GB, u, p) for u, p in stages))
    return min(held)


def dynamo_held(plan: Plan, files: list[BundleFile], less: int) -> int:
    """kvbm 1.5.1/1.6.1 ``leader.rs``: ``DYN_KVBM_CPU_CACHE_GB`` × 10^9 over the summed
    bytes per block of all TP workers, an MLA latent once per worker. ``less`` × 0.001 GB
    are taken off."""
    ((u, p),) = stage_truth(plan)
    tp = plan.parallelism.tensor_parallel_size
    held = []
    for serve in scripts(files, "serve.sh"):
        env = parse_script(serve.text)[0]
        cap = (float(env["DYN_KVBM_CPU_CACHE_GB"]) - less / 1000) * GB
        held.append(fits(cap, tp * u, tp * p))
    return min(held)


def helm_held(plan: Plan, files: list[BundleFile], less: int) -> int:
    """production-stack 0.1.12: ``cpuOffloadingBufferSize`` → ``LMCACHE_MAX_LOCAL_CPU_SIZE``
    GiB per worker (LMCache semantics above); with MLA the first rank keeps it all in
    ``first_rank_max_local_cpu_size`` of ``LMCACHE_EXTRA_CONFIG`` (LMCache reads every
    key from ``LMCACHE_<KEY>``, ``lmcache/v1/config.py``), defaulting to the per-worker
    value. ``less`` GiB are taken off."""
    ((u, p),) = stage_truth(plan)
    (values_file,) = scripts(files, "helm-values.yaml")
    spec = yaml.safe_load(values_file.text)["servingEngineSpec"]["modelSpec"][0]
    cap = float(int(spec["lmcacheConfig"]["cpuOffloadingBufferSize"]))
    assert cap > 0  # the chart drops values whose integer part is 0
    env = {e["name"]: e.get("value") for e in spec.get("env", [])}
    extra = json.loads(env.get("LMCACHE_EXTRA_CONFIG") or "{}")
    if uses_mla(plan) and extra.get("save_only_first_rank", True):
        cap = float(extra.get("first_rank_max_local_cpu_size", cap))
    return fits((cap - less) * GIB, u, p)


READERS: dict[str, tuple[str, Callable[[Plan, list[BundleFile], int], int]]] = {
    "vllm": ("vllm", vllm_held),
    "lmcache": ("lmcache", lmcache_held),
    "lmcache-server": ("lmcache-server", lmcache_server_held),
    "sglang": ("sglang", sglang_held),
    "dynamo": ("dynamo", dynamo_held),
    "helm": ("lmcache", helm_held),
}


def _declined(plan: Plan, reader: str, files: list[BundleFile], shared: str) -> bool:
    """Layouts a bundle has no confirmed launch for: no files, a sentence instead."""
    par = plan.parallelism
    notes = " ".join(notes_of(plan, READERS[reader][0], shared))
    if reader == "dynamo" and par.pipeline_parallel_size > 1:
        assert not [f for f in files if "/dynamo/" in f.path] and "no scripts" in notes
        return True
    if reader == "helm" and (par.pipeline_parallel_size > 1 or par.data_parallel_size > 1):
        assert not scripts(files, "helm-values.yaml") and "No Helm values" in notes
        return True
    return False


@pytest.mark.parametrize("shared", SHARED)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_tier_holds_the_planned_conversations(reader: str, layout: str, shared: str) -> None:
    plan = plan_of(layout)
    planned = plan.cpu_tier.conversations_per_instance
    # Each layout rests users beyond the GPUs: users / instances, rounded up.
    assert planned > plan.parallelism.conversations_per_replica
    assert planned == -(-plan.request.workload.users // plan.parallelism.total_replicas)
    engine, held = READERS[reader]
    _d, files = files_of(plan, engine, shared)
    if _declined(plan, reader, files, shared):
        return
    assert held(plan, files, 0) >= planned
    assert held(plan, files, 1) < planned  # one unit less no longer holds them


def test_tp_over_kv_heads_counts_each_head_on_every_rank() -> None:
    # Qwen3-235B-A22B: 94 layers, 4 KV heads, head_dim 128 (published config); at TP 8
    # each rank holds one head (vLLM ModelConfig.get_num_kv_heads), so the 8 ranks store
    # 2 × 94 × 8 × 128 × 2 B = 385,024 B per token: twice the model's 192,512 B.
    plan = plan_of("gqa-tp8-over-4-heads")
    assert plan.kv_bytes_per_token == 192_512
    ranks = plan.cpu_tier.ranks
    assert ranks.stored_conversation_bytes == 385_024 * (8192 - 1024)
    # 100 conversations and one 1,024-token prompt, as the 8 ranks store them.
    assert plan.cpu_tier.per_instance_gib * GIB == pytest.approx(385_024 * (100 * 7168 + 1024))


def test_mla_tier_is_a_distinct_conversation_count_not_a_mirror() -> None:
    # DeepSeek-V3 on 8 × B200, 200 users at 8,192 tokens: the GPUs hold far fewer
    # distinct conversations than 200 (the latent sits on all 8 ranks), so the tier adds
    # hits and no "mirror" warning is given.
    plan = plan_of("mla-tp8")
    assert plan.parallelism.conversations_per_replica < 200
    assert plan.cpu_tier.exceeds_gpu_cache
    assert "mirror" not in [n.code for n in plan.verdict.warning_notes]
    # vLLM stores the latent once: 200 × 61 × 576 × 2 B × 8,192 = 107.2 GiB → 108 GiB
    # (engine_flags.md §1.2; DeepSeek-V3 config kv_lora_rank 512 + qk_rope_head_dim 64).
    assert plan.vllm_offload is not None
    assert plan.vllm_offload.cpu_bytes_to_use == 108 * GIB
    # The plan's tier (and the DIMMs) cover SGLang's and KVBM's copy on every rank.
    assert plan.cpu_tier.per_instance_gib * GIB == 8 * 200 * 61 * 576 * 2 * 8192


def test_lmcache_mla_sets_the_first_rank_size() -> None:
    # lmcache/v1/cache_engine.py: with MLA only the first rank saves, with
    # extra_config.first_rank_max_local_cpu_size GiB; 200 × 0.5361 GiB = 107.23 GiB.
    _d, files = files_of(plan_of("mla-tp8"), "lmcache", "s3")
    doc = yaml.safe_load(scripts(files, "lmcache.yaml")[0].text)
    assert doc["extra_config"]["save_only_first_rank"] is True
    assert doc["extra_config"]["first_rank_max_local_cpu_size"] == 107.23
    assert doc["extra_config"]["s3_region"]  # the shared tier's keys stay beside it
    # With two pipeline stages worker 0 would save stage 0 only: every worker saves.
    _d, files = files_of(plan_of("mla-pp2"), "lmcache")
    for config in scripts(files, "lmcache.yaml"):
        assert yaml.safe_load(config.text)["extra_config"] == {"save_only_first_rank": False}
