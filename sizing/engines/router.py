"""The router in front of several vLLM instances: production-stack router and Helm values.

Sources: vllm-project/production-stack ``src/vllm_router/parsers/parser.py`` (router
CLI), its container image ``ghcr.io/vllm-project/production-stack/router`` whose entry
point is the router (NetApp seed, step 4, runs it with ``docker run --network host``),
and chart ``vllm-stack-0.1.12`` ``helm/templates/deployment-vllm-multi.yaml``
(engine_flags.md §5). ``pip install vllm-router`` installs an unrelated router without
these flags, so the bundle runs the image.

Rules:

- API key: every instance runs with the same ``VLLM_API_KEY`` (read by
  ``vllm/envs.py``; the OpenAI server then wants it as a bearer token). The router
  checks no key of its own: it forwards the client's headers, ``Authorization``
  included, to the backend it picks (``src/vllm_router/services/request_service/
  request.py``, ``_build_backend_request_headers``), so clients send the instances' key. The bundle
  ships only a placeholder (:mod:`sizing.engines.api_key`); every script refuses to
  start while the key is unset or still the placeholder.

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
  MLA 1 GiB, the least whole value, because LMCache's first rank alone saves, with
  ``first_rank_max_local_cpu_size`` set through ``LMCACHE_EXTRA_CONFIG``).
  A modelSpec is one pod of ``requestGPU`` GPUs, so the values are emitted only for
  plans without pipeline or data parallelism.
- What the chart needs and does (``sizing/data/production_stack_chart.json``, read from
  the chart at the commit it names): ``requestCPU`` and ``requestMemory`` are required
  (``_helpers.tpl``); the memory request is the LMCache buffer every worker of the pod
  pins plus the chart's own example request for the vLLM process; the CPU request is
  the chart's example. The chart passes ``--no-enable-prefix-caching`` unless
  ``vllmConfig.enablePrefixCaching`` is true, and the plan counts on GPU prefix hits, so
  it is set. ``diskOffloadingBufferSize`` needs ``LMCACHE_LOCAL_DISK`` in ``env`` and a
  volume on the node's NVMe mount (``extraVolumes`` hostPath, one sub-directory per
  pod by ``subPathExpr``); without one the files land on the container's writable
  layer. The shared tier is configured with the in-process YAML's own keys as
  ``LMCACHE_*`` variables (LMCache reads every config key from ``LMCACHE_<KEY>``,
  ``lmcache/v1/config.py``), and an NFS tier is the node's mount as a hostPath volume.
  ``servingEngineSpec.vllmApiKey`` names the Kubernetes secret that holds
  ``VLLM_API_KEY``. The chart sets ``PYTHONHASHSEED`` itself (123, not a value), so its
  pods hash alike among themselves but not like the bundle's scripts.
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import yaml

from sizing.data_files import data_text
from sizing.engines import flags, lmcache, shell
from sizing.engines.api_key import API_KEY_FILE, api_key_file
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.units import GIB

ROUTER_PORT = 8000
"""The router's port, the clients' endpoint (engines listen from
:data:`~sizing.engines.placement.BASE_PORT`)."""
SESSION_HEADER = "x-session-id"
ROUTER_IMAGE = "ghcr.io/vllm-project/production-stack/router:latest"
"""The production-stack router image the NetApp seed runs (override with ``ROUTER_IMAGE``)."""


CHECK_LINE_TOKENS = 16
"""Tokens one line of the README's cross-instance test prefix takes at most ("Background
document, line N of a long shared prefix.", 55 characters: about 12 tokens with the
Qwen, Llama and DeepSeek tokenizers, which average more than 3.5 characters per token
on English text)."""


def check_prefix_lines(d: Deployment) -> int:
    """Lines of the README's cross-instance test prefix: at most half the context in
    tokens (:data:`CHECK_LINE_TOKENS` per line), so the prompt and its answer fit the
    ``--max-model-len`` the instances start with (8,192 tokens: 256 lines, several of
    LMCache's 256-token chunks)."""
    return d.context_tokens // 2 // CHECK_LINE_TOKENS


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
    """``router/vllm-router.sh``: runs the router image as the seed does, with the
    router's arguments after the image (``$ROUTER_IMAGE``, default :data:`ROUTER_IMAGE`).
    The router holds no key: clients send the instances' key, which it forwards."""
    comments = [
        "Replace node1, node2… with the nodes' addresses. Needs Docker; the router",
        f"listens on port {ROUTER_PORT} of this host (clients use http://<host>:{ROUTER_PORT}/v1).",
    ]
    if routing_logic(d) == "session":
        comments.append(f"Clients send the header {SESSION_HEADER} (one value per conversation).")
    comments.append(
        "The router forwards each client's Authorization header; clients send the"
        " instances' VLLM_API_KEY."
    )
    run = " \\\n  ".join(
        (
            " ".join(DOCKER_RUN[:4]) + " " + shell.command(DOCKER_RUN[4:6]),
            shell.command(DOCKER_RUN[6:]),
            '"$ROUTER_IMAGE"',
            shell.command(router_argv(d)),
        )
    )
    return shell.script(
        title=f"vLLM production-stack router in front of {len(d.heads)} instances",
        comments=tuple(comments),
        steps=(f'ROUTER_IMAGE="${{ROUTER_IMAGE:-{ROUTER_IMAGE}}}"', run),
    )


@cache
def _chart_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_text("production_stack_chart.json"))
    return data


def chart_facts(version: str) -> dict[str, Any]:
    """What the production-stack chart ``version`` requires and does, read from its
    files (``sizing/data/production_stack_chart.json``: ``source`` names them).

    Raises:
        KeyError: for a chart version that is not recorded.
    """
    facts: dict[str, Any] = _chart_data()[version]
    return facts


def image_tag(d: Deployment) -> str:
    """The engine image's tag: the LMCache release the bundle targets (``v0.5.6``), never
    ``latest``, so every pod runs the release the names were checked against."""
    return f"v{d.versions.lmcache}"


def whole_gib_up(n_bytes: int) -> int:
    """A GiB value the chart keeps: whole GiB, rounded up."""
    return math.ceil(n_bytes / GIB - 1e-9)


HELM_API_KEY_SECRET = {"secretName": "kv-offload-api-key", "secretKey": "VLLM_API_KEY"}
"""``servingEngineSpec.vllmApiKey``: the secret the chart reads ``VLLM_API_KEY`` from."""
HELM_DISK_MOUNT = "/data/lmcache"
"""Where the pod sees its sub-directory of the node's NVMe mount (``LMCACHE_LOCAL_DISK``)."""
_CHART_SET = ("local_cpu", "max_local_cpu_size", "max_local_disk_size", "local_disk")
"""LMCache keys the chart or the disk volume sets; every other key of the in-process
YAML goes into ``env`` as ``LMCACHE_<KEY>``."""


def lmcache_env(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The in-process YAML ``doc`` (:func:`sizing.engines.lmcache.config`) as the
    ``LMCACHE_<KEY>`` variables LMCache reads (``lmcache/v1/config.py``,
    ``_update_config_from_env``: booleans as ``true``/``false``, lists comma-separated,
    ``extra_config`` as JSON), without the keys the chart sets."""
    env: list[dict[str, Any]] = []
    for key, value in doc.items():
        if key in _CHART_SET:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, list):
            text = ",".join(value)
        elif isinstance(value, dict):
            text = json.dumps(value, separators=(",", ":"), sort_keys=True)
        else:
            text = str(value)
        env.append({"name": f"LMCACHE_{key.upper()}", "value": text})
    return env


def helm_values(d: Deployment) -> dict[str, Any]:
    """production-stack values: one modelSpec with LMCache and the router.

    Every value the chart requires is set (:func:`chart_facts`); sizes follow the module
    doc. Raises ``ValueError`` (a renderer bug) for a key the chart does not read.
    """
    facts = chart_facts(d.versions.production_stack)
    slot = d.heads[0]
    doc = lmcache.config(d, slot)
    worker_gib = whole_gib_up(d.binding_rank_tier_bytes)
    pinned_gib = worker_gib * d.world_size
    if d.ranks.lmcache_first_rank_only:
        # MLA: the first rank's tier goes in LMCACHE_EXTRA_CONFIG; the others get the
        # least whole GiB the chart keeps (it drops values whose integer part is 0).
        pinned_gib = worker_gib + (d.world_size - 1)
        worker_gib = 1
    lmcache_values: dict[str, Any] = {
        "enabled": True,
        "cpuOffloadingBufferSize": str(worker_gib),
    }
    env = lmcache_env(doc)
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if d.has_nvme:
        lmcache_values["diskOffloadingBufferSize"] = str(
            whole_gib_up(math.ceil(d.nvme_bytes_per_instance / d.world_size))
        )
        env.append({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}})
        env.append({"name": "LMCACHE_LOCAL_DISK", "value": f"file://{HELM_DISK_MOUNT}/"})
        volumes.append(
            {
                "name": "lmcache-disk",
                "hostPath": {"path": f"{d.tiers.nvme_mount}/lmcache", "type": "DirectoryOrCreate"},
            }
        )
        mounts.append(
            {"name": "lmcache-disk", "mountPath": HELM_DISK_MOUNT, "subPathExpr": "$(POD_NAME)"}
        )
    if d.shared == "nfs":
        volumes.append(
            {"name": "kv-shared", "hostPath": {"path": d.tiers.nfs_mount, "type": "Directory"}}
        )
        mounts.append({"name": "kv-shared", "mountPath": d.tiers.nfs_mount})
    spec: dict[str, Any] = {
        "name": "kv-offload",
        "repository": facts["image"]["repository"],
        "tag": image_tag(d),
        "modelURL": d.model_id,
        "replicaCount": len(d.slots),
        "requestCPU": facts["request_cpu"],
        "requestMemory": f"{pinned_gib + facts['process_memory_gib']}Gi",
        "requestGPU": d.tensor_parallel_size,
        "vllmConfig": {
            "enablePrefixCaching": True,
            "tensorParallelSize": d.tensor_parallel_size,
            "maxModelLen": d.context_tokens,
        },
        "lmcacheConfig": lmcache_values,
        "env": env,
    }
    if volumes:
        spec["extraVolumes"] = volumes
        spec["extraVolumeMounts"] = mounts
    if d.kv_dtype == "fp8":
        spec["vllmConfig"]["extraArgs"] = ["--kv-cache-dtype", "fp8"]
    router: dict[str, Any] = {"routingLogic": routing_logic(d)}
    if router["routingLogic"] == "session":
        router["sessionKey"] = SESSION_HEADER
    version = d.versions.production_stack
    flags.require("production-stack", version, "helm_model_spec", spec)
    flags.require("production-stack", version, "helm_vllm_config", spec["vllmConfig"])
    flags.require("production-stack", version, "helm_lmcache_config", lmcache_values)
    flags.require("production-stack", version, "helm_router_spec", router)
    return {
        "servingEngineSpec": {"vllmApiKey": dict(HELM_API_KEY_SECRET), "modelSpec": [spec]},
        "routerSpec": router,
    }


def helm_notes(d: Deployment) -> list[str]:
    """How to install ``router/helm-values.yaml`` and what its values mean."""
    version = d.versions.production_stack
    secret = HELM_API_KEY_SECRET
    notes = [
        f"production-stack Helm (chart vllm-stack {version}): create the key's secret, then "
        "install:\n\n```sh\n"
        f"kubectl create secret generic {secret['secretName']} "
        f"--from-literal={secret['secretKey']}=<your key>\n"
        "helm repo add vllm https://vllm-project.github.io/production-stack\n"
        f"helm install kv-offload vllm/vllm-stack --version {version} "
        "-f router/helm-values.yaml\n```",
        "Helm cpuOffloadingBufferSize is whole GiB per worker (rounded up), the "
        "chart's LMCache semantics; requestMemory is that buffer on every worker of the pod "
        f"plus {chart_facts(version)['process_memory_gib']} GiB for vLLM itself.",
        f"The Helm pods run lmcache/vllm-openai:{image_tag(d)}, the LMCache release the "
        "bundle's names were checked against; pin the digest you tested.",
    ]
    if d.has_nvme:
        notes.append(
            f"Helm: each pod's LMCache disk tier is a sub-directory (the pod's name) of "
            f"{d.tiers.nvme_mount}/lmcache on its node; delete the directories of pods that "
            "are gone."
        )
    if d.shared != "none":
        notes.append(
            "Helm: the chart sets PYTHONHASHSEED=123 in every pod, so the pods share the "
            f"{d.shared.upper()} tier with one another, not with instances started by the "
            f"scripts (PYTHONHASHSEED={d.tiers.python_hash_seed})."
        )
    return notes


def render(d: Deployment, *, helm: bool) -> Rendered:
    """``api-key.env``, ``router/vllm-router.sh`` when there are several instances, Helm
    values if asked."""
    files = [BundleFile(API_KEY_FILE, api_key_file())]
    notes = [
        f"{API_KEY_FILE} holds a placeholder API key: replace it with a secret of your own "
        "before anything starts; every engine instance checks it (VLLM_API_KEY, SGLang's "
        "--api-key). The router checks no key: it forwards the client's Authorization "
        "header to the instance it picks."
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
        notes.extend(helm_notes(d))
    return Rendered("router", tuple(files), tuple(notes))
