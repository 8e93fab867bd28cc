"""NVIDIA Dynamo KVBM (1.5.1 and 1.6.1): environment, connector, frontend.

Units and scopes (``kvbm/_core.abi3.so`` strings; ``lib/llm/src/block_manager/
distributed/leader.rs``, ``storage/disk.rs``; ``dynamo/vllm/args.py``; engine_flags.md §4):

- ``DYN_KVBM_CPU_CACHE_GB`` and ``DYN_KVBM_DISK_CACHE_GB`` are floats in **GB (10^9
  bytes)**, **total over the engine's TP workers** (the leader divides by the summed
  bytes per block of all workers, with no MLA exception, so an MLA latent counts once
  per worker). The CPU value is rounded up to 0.001 GB (1 MB).
- Tier order (Dynamo KVBM guide): disk ≥ CPU ≥ GPU KV. The disk tier is the larger of
  the plan's NVMe share and the CPU tier; a CPU tier not above the GPU KV only mirrors it.
- ``DYN_KVBM_DISK_DISABLE_O_DIRECT`` disables O_DIRECT when set to any value, so the
  bundle never sets it. ``DYN_KVBM_LEADER_ZMQ_PUB_PORT``/``_ACK_PORT`` differ per
  instance on one host.
- The connector is ``DynamoConnector`` from ``kvbm.vllm_integration.connector`` through
  ``--kv-transfer-config`` (``--connector`` is rejected by 1.5.1 and 1.6.1); KV events
  go to the frontend's KV router (``python -m dynamo.frontend --router-mode kv``).
- Discovery: the frontend and the workers find one another through a discovery
  backend, etcd by default (``--discovery-backend``,
  ``dynamo/common/configuration/groups/runtime_args.py`` and
  ``dynamo/frontend/frontend_args.py``). The bundle starts no etcd, so every script
  passes ``--discovery-backend file``: records are files under ``DYN_FILE_KV``, which
  the frontend and every worker must see alike. On one node that is a local directory
  (:data:`DISCOVERY_DIR`); across nodes it is the shared NFS mount, or a directory the
  engineer shares between the nodes (the scripts stop until ``DYN_FILE_KV`` is set).
  KV events use the ZMQ event plane, the default for every backend, so no NATS either.
- API key: the frontend has no key option (``frontend_args.py``); it listens on every
  address, so the README says to keep its port on a trusted network.
- Released KVBM 1.5.1/1.6.1 has no shared S3/NFS tier (its G4 variables are absent
  from the binaries): the bundle says so and emits none.
- Parallelism: ``dynamo.vllm`` takes every flag of its pinned vLLM (1.5.1: vLLM 0.28.0,
  1.6.1: vLLM 0.31.0; ``dynamo/vllm/args.py``), so the flags are those of
  ``sizing/engines/vllm.py``. Expert parallel runs one worker per data-parallel rank
  (``--data-parallel-rank``, the external load balancing ``dynamo/vllm/dp_topology.py``
  recommends), each with its own KVBM leader, ports and ``DYN_KVBM_CPU_CACHE_GB``.
  A pipeline-parallel instance spanning nodes is not emitted: its workers on the other
  nodes would have to reach the KVBM leader on the head, and no released setting for
  that was confirmed.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sizing.engines import flags, shell
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.engines.placement import Slot
from sizing.engines.vllm import not_launched, parallel_argv
from sizing.units import GB

ZMQ_PORT = 56001
"""KVBM leader's first ZMQ port (its default); instance ``i`` uses ``56001 + 2i`` and
``56002 + 2i``."""
KV_EVENTS_PORT = 20080
"""KV-events publisher port of instance 0; instance ``i`` uses ``20080 + i``."""
FRONTEND_PORT = 8000
DISCOVERY_BACKEND = "file"
"""``--discovery-backend`` of every Dynamo process: files, no etcd (module doc)."""
DISCOVERY_DIR = "/var/tmp/dynamo-discovery"
"""``DYN_FILE_KV`` when the frontend and all workers run on one node."""
CONNECTOR = {
    "kv_connector": "DynamoConnector",
    "kv_role": "kv_both",
    "kv_connector_module_path": "kvbm.vllm_integration.connector",
}
MULTI_NODE_UNSUPPORTED = (
    "Dynamo {version}: no scripts for an instance spanning {pp} nodes (pipeline "
    "parallel). dynamo.vllm has --headless for the workers of the other nodes, but "
    "how those workers reach the KVBM leader on the head node was not confirmed for "
    "this release. Set it up by hand: the vLLM flags of nodeN/vllm/instanceM/serve.sh "
    "with python -m dynamo.vllm, --headless on every node but the first, and "
    "DYN_KVBM_CPU_CACHE_GB on the head node as the instance's total in GB."
)
SHARED_TIER_UNSUPPORTED = (
    "Released Dynamo KVBM {version} has no shared S3 or NFS tier: the bundle configures "
    "none for Dynamo. Use vLLM native, LMCache or SGLang for a tier shared between nodes."
)


def gb_up(n_bytes: int) -> float:
    """``n_bytes`` in GB, rounded up to 0.001 GB."""
    return math.ceil(n_bytes / GB * 1000 - 1e-6) / 1000


def discovery_dir(d: Deployment) -> str | None:
    """``DYN_FILE_KV`` the scripts set, or None when the nodes share no directory the
    bundle knows (several nodes without an NFS tier): then the engineer sets it."""
    if len(d.nodes) == 1:
        return DISCOVERY_DIR
    if d.shared == "nfs":
        return f"{d.tiers.shared_dir('dynamo')}/discovery"
    return None


def discovery_steps(d: Deployment) -> tuple[str, ...]:
    """The shell lines that set ``DYN_FILE_KV`` and create the directory."""
    flags.require("dynamo", d.versions.dynamo, "env", ["DYN_FILE_KV"])
    where = discovery_dir(d)
    if where is None:
        return (
            ': "${DYN_FILE_KV:?set DYN_FILE_KV to a directory every node of this '
            'deployment shares (Dynamo file discovery)}"',
            'export DYN_FILE_KV="$DYN_FILE_KV"',
            'mkdir -p "$DYN_FILE_KV"',
        )
    return (f"export DYN_FILE_KV={shell.command([where])}", 'mkdir -p "$DYN_FILE_KV"')


def kvbm_env(d: Deployment, slot: Slot) -> dict[str, str]:
    """The KVBM variables of one instance."""
    cpu_gb = gb_up(d.cpu_bytes_per_instance)  # summed over the workers, MLA too
    env = {
        "CUDA_VISIBLE_DEVICES": slot.cuda_visible_devices,
        "DYN_KVBM_CPU_CACHE_GB": f"{cpu_gb:g}",
        "DYN_KVBM_LEADER_ZMQ_PUB_PORT": str(ZMQ_PORT + 2 * slot.index),
        "DYN_KVBM_LEADER_ZMQ_ACK_PORT": str(ZMQ_PORT + 2 * slot.index + 1),
    }
    if d.has_nvme:
        disk_gb = max(gb_up(d.nvme_bytes_per_instance), cpu_gb)
        env["DYN_KVBM_DISK_CACHE_GB"] = f"{disk_gb:g}"
        env["DYN_KVBM_DISK_CACHE_DIR"] = f"{d.tiers.nvme_mount}/kvbm/{slot.name}"
    flags.require("dynamo", d.versions.dynamo, "env", env)
    return env


def worker_argv(d: Deployment, slot: Slot) -> list[str]:
    """``python -m dynamo.vllm`` for one instance."""
    events: dict[str, Any] = {
        "publisher": "zmq",
        "topic": "kv-events",
        "endpoint": f"tcp://*:{KV_EVENTS_PORT + slot.index}",
        "enable_kv_cache_events": True,
    }
    version = d.versions.dynamo
    flags.require("dynamo", version, "kv_transfer_config", CONNECTOR)
    flags.require("dynamo", version, "connectors", [CONNECTOR["kv_connector"]])
    flags.require("dynamo", version, "kv_events_config", events)
    argv = [
        "python",
        "-m",
        "dynamo.vllm",
        "--discovery-backend",
        DISCOVERY_BACKEND,
        "--model",
        d.model_id,
        *parallel_argv(d, slot),
        "--max-model-len",
        str(d.context_tokens),
    ]
    if d.kv_dtype == "fp8":
        argv += ["--kv-cache-dtype", "fp8"]
    argv += [
        "--kv-transfer-config",
        json.dumps(CONNECTOR, separators=(",", ":")),
        "--kv-events-config",
        json.dumps(events, separators=(",", ":")),
    ]
    flags.require("dynamo", version, "worker_cli", flags.cli_flags(argv))
    return argv


def frontend_argv(d: Deployment) -> list[str]:
    """``python -m dynamo.frontend --router-mode kv`` with file discovery."""
    argv = [
        "python",
        "-m",
        "dynamo.frontend",
        "--discovery-backend",
        DISCOVERY_BACKEND,
        "--router-mode",
        "kv",
        "--http-port",
        str(FRONTEND_PORT),
    ]
    flags.require("dynamo", d.versions.dynamo, "frontend_cli", flags.cli_flags(argv))
    flags.require("dynamo", d.versions.dynamo, "router_modes", ["kv"])
    return argv


def render(d: Deployment) -> Rendered:
    """Per instance ``serve.sh`` (KVBM worker) and, on node 1, ``frontend.sh``."""
    version = d.versions.dynamo
    notes: list[str] = []
    if d.shared != "none":
        notes.append(SHARED_TIER_UNSUPPORTED.format(version=version))
    if not d.has_cpu_tier:
        notes.append("The plan has no CPU tier, so KVBM is not configured.")
        return Rendered("dynamo", (), tuple(notes))
    if not d.launch_supported:
        return Rendered("dynamo", (), (*notes, not_launched("Dynamo")))
    if d.multi_node:
        notes.append(MULTI_NODE_UNSUPPORTED.format(version=version, pp=d.pipeline_parallel_size))
        return Rendered("dynamo", (), tuple(notes))
    files = [
        BundleFile(
            f"node{d.nodes[0]}/dynamo/frontend.sh",
            shell.script(
                title=f"Dynamo {version} frontend with the KV-aware router",
                comments=(
                    "Start once; it routes to every worker below. It finds them through",
                    "the files under DYN_FILE_KV (file discovery: no etcd, no NATS).",
                    "It checks no API key: keep its port on a trusted network.",
                ),
                steps=discovery_steps(d),
                exec_argv=frontend_argv(d),
            ),
            executable=True,
        )
    ]
    for slot in d.slots:
        env = kvbm_env(d, slot)
        files.append(
            BundleFile(
                f"node{slot.node}/dynamo/{slot.name}/serve.sh",
                shell.script(
                    title=f"Dynamo {version} vLLM worker with KVBM, {slot.host} {slot.name}",
                    comments=(
                        "DYN_KVBM_*_CACHE_GB are GB (10^9 bytes), total over the "
                        f"instance's {d.world_size} worker(s); keep disk >= CPU >= GPU KV.",
                        *(
                            (f"Data-parallel rank {slot.dp_rank} of {d.data_parallel_size}.",)
                            if slot.dp_rank is not None
                            else ()
                        ),
                    ),
                    env=env,
                    steps=discovery_steps(d),
                    exec_argv=[*slot.numactl, *worker_argv(d, slot)],
                ),
                executable=True,
            )
        )
    if d.tier_mirrors_gpu:
        notes.append(
            "The CPU tier keeps no more conversations than the GPUs of an instance, so "
            "KVBM's host tier would only mirror the GPU."
        )
    notes.append("DYN_KVBM_CPU_CACHE_GB is GB (10^9 bytes) for the whole instance, not per worker.")
    where = discovery_dir(d)
    notes.append(
        "Dynamo runs without etcd or NATS: the frontend and the workers find each other "
        "through files under DYN_FILE_KV ("
        + (where if where else "a directory shared by every node; set it before starting")
        + "), and KV events travel over ZMQ. The Dynamo frontend checks no API key: keep "
        f"its port {FRONTEND_PORT} on a trusted network."
    )
    return Rendered("dynamo", tuple(files), tuple(notes))
