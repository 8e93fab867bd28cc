"""The router in front of several vLLM instances: production-stack router and Helm values.

Sources: vllm-project/production-stack ``src/vllm_router/parsers/parser.py`` (router
CLI) and chart ``vllm-stack-0.1.12`` ``helm/templates/deployment-vllm-multi.yaml``
(engine_flags.md §5).

Rules:

- Static discovery lists every instance's URL with its model, index-aligned: the head
  of each pipeline-parallel instance, each data-parallel rank of an expert-parallel
  engine (each has its own API server and CPU tier).
- The CPU (and NVMe) tier of each instance is its own: a returning conversation finds
  its KV only on the instance that served it before. The router therefore uses
  ``session`` routing on a header the client sends (``x-session-id``); ``kvaware``
  would need LMCache's controller on every engine. With a shared tier another instance
  can still load the prefix, but from slower storage.
- Helm ``lmcacheConfig.cpuOffloadingBufferSize`` is LMCache's ``max_local_cpu_size``:
  **GiB per worker**, and the chart drops values whose integer part is 0, so the
  bundle writes a whole number of GiB, rounded up: what the fullest worker keeps (for
  MLA the whole latent, which LMCache's first rank alone saves with
  ``first_rank_max_local_cpu_size`` defaulting to this value; the other ranks start no
  CPU tier, ``lmcache/v1/cache_engine.py``). ``diskOffloadingBufferSize`` needs
  ``LMCACHE_LOCAL_DISK`` in ``env`` (the chart does not set it). The chart sets
  ``PYTHONHASHSEED`` itself. A modelSpec is one pod of ``requestGPU`` GPUs, so the
  values are emitted only for plans without pipeline or data parallelism.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from sizing.engines import flags, shell
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.units import GIB

ROUTER_PORT = 8000
"""The router's port, the clients' endpoint (engines listen from 8100)."""
SESSION_HEADER = "x-session-id"


def router_argv(d: Deployment) -> list[str]:
    """``vllm-router`` with static backends and session routing."""
    backends = ",".join(f"http://{s.host}:{s.port}" for s in d.heads)
    models = ",".join(d.model_id for _ in d.heads)
    argv = [
        "vllm-router",
        "--service-discovery",
        "static",
        "--static-backends",
        backends,
        "--static-models",
        models,
        "--routing-logic",
        "session",
        "--session-key",
        SESSION_HEADER,
        "--port",
        str(ROUTER_PORT),
    ]
    version = d.versions.production_stack
    flags.require("production-stack", version, "router_cli", flags.cli_flags(argv))
    flags.require("production-stack", version, "routing_logic", ["session"])
    return argv


def whole_gib_up(n_bytes: int) -> int:
    """A GiB value the chart keeps: whole GiB, rounded up."""
    return math.ceil(n_bytes / GIB - 1e-9)


def helm_values(d: Deployment) -> dict[str, Any]:
    """production-stack values: one modelSpec with LMCache and the router."""
    lmcache: dict[str, Any] = {
        "enabled": True,
        "cpuOffloadingBufferSize": str(whole_gib_up(d.binding_rank_tier_bytes)),
    }
    spec: dict[str, Any] = {
        "name": "kv-offload",
        "repository": "lmcache/vllm-openai",
        "tag": "latest",
        "modelURL": d.model_id,
        "replicaCount": len(d.slots),
        "requestGPU": d.tensor_parallel_size,
        "vllmConfig": {
            "tensorParallelSize": d.tensor_parallel_size,
            "maxModelLen": d.context_tokens,
        },
        "lmcacheConfig": lmcache,
    }
    if d.kv_dtype == "fp8":
        spec["vllmConfig"]["extraArgs"] = ["--kv-cache-dtype", "fp8"]
    if d.has_nvme:
        lmcache["diskOffloadingBufferSize"] = str(
            whole_gib_up(math.ceil(d.nvme_bytes_per_instance / d.world_size))
        )
        spec["env"] = [{"name": "LMCACHE_LOCAL_DISK", "value": "file:///data/lmcache/"}]
    router = {"routingLogic": "session", "sessionKey": SESSION_HEADER}
    version = d.versions.production_stack
    flags.require("production-stack", version, "helm_model_spec", spec)
    flags.require("production-stack", version, "helm_vllm_config", spec["vllmConfig"])
    flags.require("production-stack", version, "helm_lmcache_config", lmcache)
    flags.require("production-stack", version, "helm_router_spec", router)
    return {"servingEngineSpec": {"modelSpec": [spec]}, "routerSpec": router}


def render(d: Deployment, *, helm: bool) -> Rendered:
    """``router/vllm-router.sh`` when there are several instances; Helm values if asked."""
    files: list[BundleFile] = []
    notes: list[str] = []
    if len(d.heads) > 1:
        files.append(
            BundleFile(
                "router/vllm-router.sh",
                shell.script(
                    title=f"vLLM production-stack router ({d.versions.production_stack}) "
                    f"in front of {len(d.heads)} instances",
                    comments=(
                        "Replace node1, node2… with the nodes' addresses. Clients send the",
                        f"header {SESSION_HEADER} (one value per conversation).",
                    ),
                    exec_argv=router_argv(d),
                ),
                executable=True,
            )
        )
        notes.append(
            "Each instance has its own CPU tier: a returning conversation is fast only on "
            f"the instance that served it, so the router uses session routing on "
            f"{SESSION_HEADER} (KV-aware routing would need LMCache's controller)."
        )
    if helm and d.has_cpu_tier and (d.multi_node or d.data_parallel_size > 1):
        notes.append(
            "No Helm values: a production-stack modelSpec is one pod on one node, and this "
            "plan needs pipeline or data parallelism across its GPUs."
        )
    elif helm and d.has_cpu_tier:
        files.append(
            BundleFile("router/helm-values.yaml", yaml.safe_dump(helm_values(d), sort_keys=False))
        )
        notes.append(
            "Helm cpuOffloadingBufferSize is whole GiB per worker (rounded up), the "
            "chart's LMCache semantics."
        )
    return Rendered("router", tuple(files), tuple(notes))
