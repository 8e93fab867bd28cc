"""SGLang HiCache (0.5.22 and 0.5.23): the host pool and the storage backend.

Units and scopes (``sglang/srt/arg_groups/fields/memory.py``,
``mem_cache/pool_host/base.py``, ``mem_cache/storage/backend_factory.py``;
engine_flags.md §3):

- ``--hicache-size`` is an **integer** in **GB (10^9 bytes)** and **per rank**: every TP
  rank allocates ``size × 10^9`` bytes and keeps its own heads; the MLA host pool keeps
  the whole latent on every rank (``MLATokenToKVPoolHost.get_size_per_token``), and with
  PP the stages are synced to the smallest token capacity, so the fullest rank binds
  (:mod:`sizing.memory.rank_bytes`). The bundle rounds that rank's bytes up to the next whole
  GB. It overrides ``--hicache-ratio``.
- ``--enable-hierarchical-cache`` works in both versions (``--enable-hicache`` is only
  an alias in 0.5.23).
- One L3 storage backend: the ``file`` backend on NVMe (``file_storage_path``,
  ``max_size`` per rank with SI ``G`` = 10^9), or on NFS with
  ``enable_metadata_cache``; S3 through ``nixl`` with the ``obj`` plugin. With both an
  NVMe and a shared tier planned, the shared tier is the backend.
- KV dtype: ``--kv-cache-dtype fp8_e4m3`` for an FP8 cache.

Parallelism (``sglang/srt/arg_groups/fields/parallel.py`` and ``fields/device.py`` of
both wheels; the flag is ``--`` plus the field name with dashes,
``arg_groups/arg_utils.py``):

- Pipeline parallel over nodes: ``--pp-size`` with ``--nnodes``, ``--node-rank`` and
  ``--dist-init-addr <head>:<port>`` on every node; node ``k`` runs stage ``k``. HiCache
  keeps one host pool per (TP, PP) rank and tags its storage keys with the PP rank
  (``mem_cache/hicache_storage.py``), so ``--hicache-size`` is still per rank.
- Expert parallel: the node's data-parallel ranks are one server,
  ``--tp-size`` = TP × DP GPUs, ``--attn-dp-size`` DP attention groups (one
  scheduler each, ``attn_dp_size``; ``--enable-dp-attention`` is deprecated in
  0.5.23) and ``--ep-size`` TP × DP. Each rank still holds ``--hicache-size`` GB.
- API key: the server that serves the API (the head of each instance) checks
  ``--api-key`` (``arg_groups/fields/serving.py``; its OpenAI server then wants it as a
  bearer token), given the same ``VLLM_API_KEY`` as every vLLM instance; the script
  stops while the key is unset or the placeholder.
- ``--numa-node`` gives one NUMA node per GPU id; it is set when a server's cards span
  sockets, so each rank's host pool lands on its card's socket.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

from sizing.engines import flags, shell
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.engines.placement import Slot
from sizing.engines.vllm import key_steps, not_launched
from sizing.units import GB

DIST_INIT_PORT = 25000
"""Port of ``--dist-init-addr`` for instance 0; instance ``i`` uses ``25000 + i``."""


def launches(d: Deployment) -> tuple[Slot, ...]:
    """One server per slot; with data parallel, one server per node holding all of
    its ranks (GPUs joined, the first rank's port)."""
    if d.data_parallel_size == 1:
        return d.slots
    out = []
    for node in d.nodes:
        ranks = d.node_slots(node)
        gpus = tuple(g for r in ranks for g in r.gpu_ids)
        numa = tuple(n for r in ranks for n in r.gpu_numa)
        out.append(
            replace(
                ranks[0],
                gpu_ids=gpus,
                gpu_numa=numa,
                numa_nodes=tuple(sorted(set(numa))),
                dp_rank=None,
            )
        )
    return tuple(out)


def ranks_per_server(d: Deployment) -> int:
    """Data-parallel ranks one server holds on a node (1 without data parallel)."""
    return len(d.node_slots(d.nodes[0])) if d.data_parallel_size > 1 else 1


def hicache_size_gb(d: Deployment) -> int:
    """``--hicache-size``: what the fullest rank keeps of the instance's conversations
    (an MLA latent whole on every rank), whole GB rounded up."""
    return math.ceil(d.binding_rank_tier_bytes / GB - 1e-9)


def storage(d: Deployment, instance: str) -> tuple[str, dict[str, Any]] | None:
    """``(backend, extra_config)`` of the L3 tier, or ``None`` without one."""
    if d.shared == "nfs":
        return "file", {
            "file_storage_path": d.tiers.shared_dir("hicache"),
            "enable_metadata_cache": True,
        }
    if d.shared == "s3":
        return "nixl", {
            "plugin": {
                "obj": {
                    "active": True,
                    "bucket": d.tiers.s3_bucket,
                    "endpoint_override": d.tiers.s3_host,
                    "region": d.tiers.s3_region,
                    "scheme": d.tiers.s3_scheme,
                }
            }
        }
    if d.has_nvme:
        per_rank_gb = math.floor(d.nvme_bytes_per_instance / d.world_size / GB)
        return "file", {
            "file_storage_path": f"{d.tiers.nvme_mount}/hicache/{instance}",
            "max_size": f"{per_rank_gb}G",
        }
    return None


def serve_argv(d: Deployment, slot: Slot) -> list[str]:
    """``python -m sglang.launch_server`` for one instance."""
    argv = [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        d.model_id,
        "--host",
        "0.0.0.0",
        "--port",
        str(slot.port),
        *(("--api-key", shell.EnvRef("VLLM_API_KEY")) if slot.is_head else ()),
        "--tp-size",
        str(len(slot.gpu_ids)),
    ]
    if d.pipeline_parallel_size > 1:
        argv += [
            "--pp-size",
            str(d.pipeline_parallel_size),
            "--nnodes",
            str(slot.stages),
            "--node-rank",
            str(slot.stage),
            "--dist-init-addr",
            f"{slot.head_host}:{DIST_INIT_PORT + slot.index}",
        ]
    dp = ranks_per_server(d)
    if dp > 1:
        argv += ["--attn-dp-size", str(dp)]
    if d.expert_parallel:
        argv += ["--ep-size", str(len(slot.gpu_ids))]
    if slot.spans_sockets:
        argv += ["--numa-node", *(str(n) for n in slot.gpu_numa)]
    argv += ["--context-length", str(d.context_tokens)]
    if d.kv_dtype == "fp8":
        argv += ["--kv-cache-dtype", "fp8_e4m3"]
    argv += ["--enable-hierarchical-cache", "--hicache-size", str(hicache_size_gb(d))]
    l3 = storage(d, slot.name)
    version = d.versions.sglang
    if l3 is not None:
        backend, extra = l3
        flags.require("sglang", version, "storage_backends", [backend])
        group = "file_backend_extra_config" if backend == "file" else "nixl_backend_extra_config"
        flags.require("sglang", version, group, _keys(extra))
        argv += [
            "--hicache-storage-backend",
            backend,
            "--hicache-storage-backend-extra-config",
            json.dumps(extra, separators=(",", ":")),
        ]
    flags.require("sglang", version, "cli", flags.cli_flags(argv))
    return argv


def _keys(doc: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in doc.items():
        out.append(key)
        if isinstance(value, dict):
            out += _keys(value)
    return out


def render(d: Deployment) -> Rendered:
    """Per instance: ``serve.sh``."""
    if not d.has_cpu_tier:
        return Rendered("sglang", (), ("The plan has no CPU tier, so HiCache stays off.",))
    if not d.launch_supported:
        return Rendered("sglang", (), (not_launched("SGLang"),))
    files = []
    for slot in launches(d):
        env = {"CUDA_VISIBLE_DEVICES": slot.cuda_visible_devices}
        if d.shared != "none":
            env["PYTHONHASHSEED"] = str(d.tiers.python_hash_seed)
        flags.require("sglang", d.versions.sglang, "env", env)
        files.append(
            BundleFile(
                f"node{slot.node}/sglang/{slot.name}/serve.sh",
                shell.script(
                    title=f"SGLang {d.versions.sglang} HiCache, {slot.host} {slot.name}",
                    comments=(
                        f"--hicache-size is whole GB (10^9 bytes) per rank: "
                        f"{hicache_size_gb(d)} GB × {len(slot.gpu_ids)} rank(s) on this node.",
                    ),
                    env=env,
                    steps=key_steps(slot),
                    exec_argv=[*slot.numactl, *serve_argv(d, slot)],
                ),
                executable=True,
            )
        )
    notes = ["--hicache-size is an integer in GB (10^9 bytes) per TP × PP rank."]
    if d.multi_node:
        notes.append(
            "SGLang: start --node-rank 0 first, then the other nodes; node1 in "
            "--dist-init-addr must resolve to the first node (or replace it)."
        )
    if d.data_parallel_size > 1:
        notes.append(
            "SGLang runs the data-parallel ranks of a node as one server (--attn-dp-size) "
            "and balances requests between them itself; a returning conversation can land "
            "on another rank than the one whose host pool holds it."
        )
    if d.shared != "none" and d.has_nvme:
        notes.append(
            "HiCache has one storage backend: the shared tier is used, the local NVMe "
            "drive is not part of the SGLang deployment."
        )
    return Rendered("sglang", tuple(files), tuple(notes))
