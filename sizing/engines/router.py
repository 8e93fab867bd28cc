"""The router in front of several vLLM instances: production-stack router and Helm values.

Sources: vllm-project/production-stack ``src/vllm_router/parsers/parser.py`` (router
CLI), its container image ``ghcr.io/vllm-project/production-stack/router`` whose entry
point is the router (NetApp seed, step 4, runs it with ``docker run --network host``),
and chart ``vllm-stack-0.1.12`` ``helm/templates/deployment-vllm-multi.yaml``
(engine_flags.md §5). ``pip install vllm-router`` installs an unrelated router without
these flags, so the bundle runs the image.

Rules:

- API key (NetApp seed, step 3 and 4): every instance runs with the same
  ``VLLM_API_KEY`` (read by ``vllm/envs.py``; the OpenAI server then wants it as a bearer
  token) and the router passes it on as ``OPENAI_API_KEY``. The bundle ships only a
  placeholder (:mod:`sizing.engines.api_key`); every script refuses to start while the
  key is unset or still the placeholder.

- Static discovery lists every instance's URL with its model, index-aligned: the head
  of each pipeline-parallel instance, each data-parallel rank of an expert-parallel
  engine (each has its own API server and CPU tier).
- The CPU (and NVMe) tier of each instance is its own: a returning conversation finds
  its KV only on the instance that served it before. Without a shared tier the router
  therefore uses ``session`` routing on a header the client sends (``x-session-id``);
  ``kvaware`` would need LMCache's controller on every engine. With a shared tier every
  instance can load what another wrote, and the router spreads requests round robin
  as the seed does (``--routing-logic roundrobin``).
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
from sizing.engines.api_key import API_KEY_CHECK, API_KEY_FILE, api_key_file
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.units import GIB

ROUTER_PORT = 8000
"""The router's port, the clients' endpoint (engines listen from
:data:`~sizing.engines.placement.BASE_PORT`)."""
SESSION_HEADER = "x-session-id"
ROUTER_IMAGE = "ghcr.io/vllm-project/production-stack/router:latest"
"""The production-stack router image the NetApp seed runs (override with ``ROUTER_IMAGE``)."""


def routing_logic(d: Deployment) -> str:
    """``session`` when each instance keeps its own tiers, ``roundrobin`` with a shared
    tier (module doc)."""
    return "roundrobin" if d.shared != "none" else "session"


def router_argv(d: Deployment) -> list[str]:
    """The router's own arguments: static backends, their models, the routing logic."""
    backends = ",".join(f"http://{s.host}:{s.port}" for s in d.heads)
    models = ",".join(d.model_id for _ in d.heads)
    logic = routing_logic(d)
    argv = [
        "--port",
        str(ROUTER_PORT),
        "--service-discovery",
        "static",
        "--static-backends",
        backends,
        "--static-models",
        models,
        "--routing-logic",
        logic,
    ]
    if logic == "session":
        argv += ["--session-key", SESSION_HEADER]
    version = d.versions.production_stack
    flags.require("production-stack", version, "router_cli", flags.cli_flags(argv))
    flags.require("production-stack", version, "routing_logic", [logic])
    return argv


DOCKER_RUN = ("docker", "run", "-d", "--rm", "--name", "vllm-router", "--network", "host")
"""The container start of the NetApp seed, step 4 (host network: the router reaches the
instances' ports and listens on the host's)."""


def router_script(d: Deployment) -> str:
    """``router/vllm-router.sh``: checks the key, then runs the router image as the seed
    does, ``-e OPENAI_API_KEY="${VLLM_API_KEY}"`` and the router's arguments after the
    image (``$ROUTER_IMAGE``, default :data:`ROUTER_IMAGE`)."""
    comments = [
        "Replace node1, node2… with the nodes' addresses. Needs Docker; the router",
        f"listens on port {ROUTER_PORT} of this host (clients use http://<host>:{ROUTER_PORT}/v1).",
    ]
    if routing_logic(d) == "session":
        comments.append(f"Clients send the header {SESSION_HEADER} (one value per conversation).")
    run = " \\\n  ".join(
        (
            " ".join(DOCKER_RUN[:4]) + " " + shell.command(DOCKER_RUN[4:6]),
            shell.command(DOCKER_RUN[6:]),
            '-e OPENAI_API_KEY="${VLLM_API_KEY}"',
            '"$ROUTER_IMAGE"',
            shell.command(router_argv(d)),
        )
    )
    return shell.script(
        title=f"vLLM production-stack router in front of {len(d.heads)} instances",
        comments=tuple(comments),
        steps=(API_KEY_CHECK, f'ROUTER_IMAGE="${{ROUTER_IMAGE:-{ROUTER_IMAGE}}}"', run),
    )


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
    router: dict[str, Any] = {"routingLogic": routing_logic(d)}
    if router["routingLogic"] == "session":
        router["sessionKey"] = SESSION_HEADER
    version = d.versions.production_stack
    flags.require("production-stack", version, "helm_model_spec", spec)
    flags.require("production-stack", version, "helm_vllm_config", spec["vllmConfig"])
    flags.require("production-stack", version, "helm_lmcache_config", lmcache)
    flags.require("production-stack", version, "helm_router_spec", router)
    return {"servingEngineSpec": {"modelSpec": [spec]}, "routerSpec": router}


def render(d: Deployment, *, helm: bool) -> Rendered:
    """``api-key.env``, ``router/vllm-router.sh`` when there are several instances, Helm
    values if asked."""
    files = [BundleFile(API_KEY_FILE, api_key_file())]
    notes = [
        f"{API_KEY_FILE} holds a placeholder API key: replace it with a secret of your own "
        "before anything starts; every vLLM instance gets it as VLLM_API_KEY and the router "
        "as OPENAI_API_KEY."
    ]
    if len(d.heads) > 1:
        files.append(BundleFile("router/vllm-router.sh", router_script(d), executable=True))
        if routing_logic(d) == "session":
            notes.append(
                "Each instance has its own CPU tier: a returning conversation is fast only "
                f"on the instance that served it, so the router uses session routing on "
                f"{SESSION_HEADER} (KV-aware routing would need LMCache's controller)."
            )
        else:
            notes.append(
                "Every instance reads the shared tier, so the router spreads requests round "
                "robin; a returning conversation reloads from the shared tier on another "
                "instance."
            )
        notes.append(
            f"The router runs the production-stack image {ROUTER_IMAGE} (set ROUTER_IMAGE "
            "to pin another tag); pip's vllm-router package is a different router."
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
