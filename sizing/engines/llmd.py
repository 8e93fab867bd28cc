"""llm-d: Helm values for vLLM pods with the CPU tier and a prefix-aware scheduler.

An llm-d deployment is two Helm releases (``sizing/data/llmd_charts.json`` records the
charts' value keys with their files and releases):

- ``llm-d-modelservice`` v0.4.12 runs the vLLM pods. With ``modelCommand: vllmServe``
  the chart itself starts ``vllm serve <model> --port <routing.servicePort>`` (the
  routing proxy off), adds ``--tensor-parallel-size`` from ``decode.parallelism.tensor``
  and ``--served-model-name``, then appends the container's ``args``
  (``templates/_helpers.tpl``, ``vllmServeModelCommand``). The bundle's args are the
  rest of its ``serve.sh``: context, KV dtype, the pinned hash algorithm and the
  ``--kv-transfer-config`` with ``OffloadingConnector`` and ``cpu_bytes_to_use`` — the
  same buffer as the script (:mod:`sizing.engines.vllm`), with its ``fs`` tiers on the
  NVMe mount (``hostPath``) and the NFS export (``nfs`` volume) where the plan has them.
  Every pod gets the same ``PYTHONHASHSEED``, so pods sharing a tier hash blocks alike,
  and ``VLLM_API_KEY`` from a secret. ``modelArtifacts.size`` sizes the ``emptyDir``
  the checkpoint is downloaded into.
- ``inferencepool`` v1.4.0 (Gateway API Inference Extension) runs the endpoint picker
  (EPP). Its ``prefix-cache-scorer`` keeps an approximate index of which pod holds which
  prompt blocks (``scorer/prefix/plugin.go``): one scorer for the GPU cache (its size
  tuned from the pods' metrics, ``autoTune``) and one for the CPU tier, whose
  ``lruCapacityPerServer`` is set by hand because vLLM reports no CPU-tier metric
  (llm-d guide ``guides/tiered-prefix-cache/cpu``). The CPU scorer's capacity is the
  tier's blocks of ``blockSizeTokens`` = 16 tokens (vLLM's default block size): every
  conversation the plan keeps per instance, rounded up to whole blocks. Weights as the
  guide: queue 2, KV-cache utilisation 2, GPU prefix 1, CPU prefix 1. The chart's
  HTTPRoute (``experimentalHttpRoute.enabled``) connects the gateway to the pool;
  ``provider.name`` is ``none``.

Pods requests: the GPUs of one instance (``nvidia.com/gpu`` = TP, which the chart
requires to equal the parallelism) and the pinned CPU tier in memory, so that
Kubernetes places a pod only where its buffer fits (pinned pages count against the
container's memory cgroup). No memory limit: the engine needs host memory beyond the
buffer, and a limit at the buffer would end the pod.

A modelservice decode pod is one instance on one node: plans with pipeline or data
parallelism get no values (the README says so).
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Any

import yaml

from sizing.engines import vllm
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.memory import vllm_buffer
from sizing.units import GIB

MODELSERVICE = "v0.4.12"
"""The llm-d-modelservice chart release the values are written for."""
INFERENCEPOOL = "v1.4.0"
"""The inferencepool chart (and EPP image) release the values are written for."""
BLOCK_TOKENS = 16
"""Tokens per block the EPP hashes (vLLM's default ``--block-size``)."""
SERVICE_PORT = 8000
"""Port of every vLLM pod (``routing.servicePort``, the InferencePool's target port)."""
POOL_LABEL = "llm-d.ai/inference-serving"
"""Label the modelservice chart puts on its pods and the InferencePool selects."""
HF_SECRET = "llm-d-hf-token"
"""Secret with the ``HF_TOKEN`` key the llm-d guides create for model downloads."""
API_KEY_SECRET = {"name": "kv-offload-api-key", "key": "VLLM_API_KEY"}
"""The secret every pod reads ``VLLM_API_KEY`` from (the key of ``api-key.env``)."""
PROVIDER = "none"
"""``provider.name`` of the inferencepool chart: ``none`` (no GKE or Istio objects; the
chart takes ``gke``, ``istio`` or ``none``, ``values.yaml``)."""
GATEWAY = "inference-gateway"
"""The Gateway the chart's HTTPRoute attaches to (``experimentalHttpRoute``, whose
default name this is; ``templates/httproute.yaml`` routes ``/`` to the pool)."""
WEIGHTS = {
    "queue-scorer": 2,
    "kv-cache-utilization-scorer": 2,
    "gpu-prefix-cache-scorer": 1,
    "cpu-prefix-cache-scorer": 1,
}
"""Scorer weights of the llm-d tiered-prefix-cache CPU guide."""


@cache
def charts() -> dict[str, Any]:
    """``sizing/data/llmd_charts.json``: the charts' recorded value keys per release."""
    text = resources.files("sizing").joinpath("data/llmd_charts.json").read_text()
    return dict(json.loads(text))


def chart(name: str, version: str) -> dict[str, Any]:
    """The record of chart ``name`` at ``version`` (``values``, ``source``, ``chart``…)."""
    return dict(charts()[name][version])


def value_keys(values: Any, prefix: str = "") -> list[str]:
    """Dotted key paths of a values document, lists of objects as ``key[].child``.

    A mapping whose keys are data rather than chart keys (labels, ``env`` items, the
    plugins file) ends the path: those are the values listed in the record.
    """
    out: list[str] = []
    if isinstance(values, dict):
        for key, value in values.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if path.endswith(OPAQUE):
                out.append(path)
            elif isinstance(value, dict) and value:
                out += value_keys(value, path)
            elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                for item in value:
                    out += value_keys(item, f"{path}[]")
            else:
                out.append(path)
    return sorted(set(out))


OPAQUE = (
    "labels",
    "matchLabels",
    "env",
    "limits",
    "requests",
    "pluginsCustomConfig",
    "volumeMounts",
    "volumes",
)
"""Value keys whose contents are Kubernetes objects or free data, not chart keys."""


def require_keys(name: str, version: str, values: dict[str, Any]) -> None:
    """Check every key path of ``values`` against the chart's recorded keys.

    Raises:
        ValueError: naming the first key chart ``name`` ``version`` does not have.
    """
    known = set(chart(name, version)["values"])
    for key in value_keys(values):
        if key not in known:
            raise ValueError(f"{name} {version} has no value {key!r}")


def cpu_tier_blocks(d: Deployment) -> int:
    """Blocks of :data:`BLOCK_TOKENS` the CPU tier of one instance holds: its
    conversations (and the shared prompt is among their tokens), each rounded up."""
    return d.conversations_per_instance * math.ceil(d.context_tokens / BLOCK_TOKENS)


def tier_volumes(d: Deployment) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(``volumes``, ``volumeMounts``) for the ``fs`` tiers: the NVMe mount as a
    ``hostPath`` and the NFS export as an ``nfs`` volume, mounted where the tiers' root
    directories lie."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if d.has_nvme:
        volumes.append(
            {
                "name": "kv-nvme",
                "hostPath": {"path": d.tiers.nvme_mount, "type": "DirectoryOrCreate"},
            }
        )
        mounts.append({"name": "kv-nvme", "mountPath": d.tiers.nvme_mount})
    if d.shared == "nfs":
        volumes.append(
            {"name": "kv-shared", "nfs": {"server": d.tiers.nfs_server, "path": d.tiers.nfs_export}}
        )
        mounts.append({"name": "kv-shared", "mountPath": d.tiers.nfs_mount})
    return volumes, mounts


def container_args(d: Deployment) -> list[str]:
    """The vLLM args the chart appends after its own (module doc): everything of the
    first instance's ``serve_argv`` after the model, the port and TP."""
    slot = d.slots[0]
    buffer = vllm_buffer.offload(d.vllm_native_bytes / GIB)
    config = vllm.kv_transfer_config(d, buffer) if buffer else None
    if config:
        vllm.check_transfer_config(d.versions.vllm, config)
    argv = vllm.serve_argv(d, slot, config)
    out: list[str] = []
    skip = {"--host": 1, "--port": 1, "--tensor-parallel-size": 1}
    i = 3  # vllm serve <model>
    while i < len(argv):
        if argv[i] in skip:
            i += 1 + skip[argv[i]]
            continue
        out.append(argv[i])
        i += 1
    return out


MODEL_VOLUME_MARGIN = 1.1
"""The model volume holds the checkpoint plus 10 % for its tokenizer and config files
and the download's partial files (a margin, not a measurement)."""


def model_volume_gib(d: Deployment) -> int:
    """``modelArtifacts.size`` in whole GiB: the ``emptyDir`` that ``HF_HOME`` downloads
    the checkpoint into (the chart's default, 5Mi, evicts the pod; ``_helpers.tpl``
    ``mountModelVolumeVolumes``)."""
    return math.ceil(d.weights_bytes * MODEL_VOLUME_MARGIN / GIB)


def modelservice_values(d: Deployment) -> dict[str, Any]:
    """Values of the llm-d-modelservice chart: one decode pod per instance."""
    volumes, mounts = tier_volumes(d)
    buffer = vllm_buffer.offload(d.vllm_native_bytes / GIB)
    tp = str(d.tensor_parallel_size)
    container: dict[str, Any] = {
        "name": "vllm",
        "image": f"vllm/vllm-openai:v{d.versions.vllm}",
        "modelCommand": "vllmServe",
        "args": container_args(d),
        "env": [
            {"name": "PYTHONHASHSEED", "value": str(d.tiers.python_hash_seed)},
            {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": dict(API_KEY_SECRET)}},
        ],
        "resources": {
            "limits": {"nvidia.com/gpu": tp},
            "requests": {
                "nvidia.com/gpu": tp,
                **({"memory": f"{buffer.kv_offloading_size_gib}Gi"} if buffer else {}),
            },
        },
        "mountModelVolume": True,
    }
    if mounts:
        container["volumeMounts"] = mounts
    decode: dict[str, Any] = {
        "create": True,
        "replicas": len(d.heads),
        "parallelism": {"tensor": d.tensor_parallel_size},
        "containers": [container],
    }
    if volumes:
        decode["volumes"] = volumes
    values = {
        "multinode": False,
        "modelArtifacts": {
            "name": d.model_id,
            "uri": f"hf://{d.model_id}",
            "size": f"{model_volume_gib(d)}Gi",
            "labels": {POOL_LABEL: "true"},
            "authSecretName": HF_SECRET,
        },
        "accelerator": {"type": "nvidia"},
        "routing": {"servicePort": SERVICE_PORT, "proxy": {"enabled": False}},
        "prefill": {"create": False},
        "decode": decode,
    }
    require_keys("llm-d-modelservice", MODELSERVICE, values)
    return values


def plugins_config(d: Deployment) -> dict[str, Any]:
    """The EPP's ``EndpointPickerConfig``: GPU and CPU prefix-cache scorers (module doc)."""
    cpu = {
        "autoTune": False,
        "blockSizeTokens": BLOCK_TOKENS,
        "lruCapacityPerServer": cpu_tier_blocks(d),
    }
    plugins: list[dict[str, Any]] = [
        {"type": "queue-scorer"},
        {"type": "kv-cache-utilization-scorer"},
        {
            "type": "prefix-cache-scorer",
            "name": "gpu-prefix-cache-scorer",
            "parameters": {"autoTune": True, "blockSizeTokens": BLOCK_TOKENS},
        },
        {"type": "prefix-cache-scorer", "name": "cpu-prefix-cache-scorer", "parameters": cpu},
        {"type": "max-score-picker"},
    ]
    record = chart("inferencepool", INFERENCEPOOL)
    for plugin in plugins:
        if plugin["type"] not in record["plugin_types"]:
            raise ValueError(f"EPP {INFERENCEPOOL} has no plugin {plugin['type']!r}")
        unknown = set(plugin.get("parameters", {})) - set(record["prefix_cache_scorer_parameters"])
        if unknown:
            raise ValueError(f"prefix-cache-scorer {INFERENCEPOOL} has no parameter {unknown}")
    profile = [{"pluginRef": name, "weight": w} for name, w in WEIGHTS.items()]
    profile.append({"pluginRef": "max-score-picker"})
    return {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": plugins,
        "schedulingProfiles": [{"name": "default", "plugins": profile}],
    }


PLUGINS_FILE = "kv-offload-plugins.yaml"
"""Name of the EPP plugins file inside the chart's ConfigMap."""


def inferencepool_values(d: Deployment) -> dict[str, Any]:
    """Values of the inferencepool chart: the EPP with the prefix-cache scorers, the pool
    selecting the modelservice pods on :data:`SERVICE_PORT`."""
    values = {
        "inferenceExtension": {
            "replicas": 1,
            "image": {"tag": INFERENCEPOOL},
            "pluginsConfigFile": PLUGINS_FILE,
            "pluginsCustomConfig": {
                PLUGINS_FILE: yaml.safe_dump(plugins_config(d), sort_keys=False)
            },
        },
        "inferencePool": {
            "targetPorts": [{"number": SERVICE_PORT}],
            "modelServerType": "vllm",
            "modelServers": {"matchLabels": {POOL_LABEL: "true"}},
        },
        "provider": {"name": PROVIDER},
        "experimentalHttpRoute": {"enabled": True, "inferenceGatewayName": GATEWAY},
    }
    require_keys("inferencepool", INFERENCEPOOL, values)
    return values


def install_script(d: Deployment) -> str:
    """The README's helm commands, as one block of text."""
    ms = chart("llm-d-modelservice", MODELSERVICE)
    pool = chart("inferencepool", INFERENCEPOOL)
    return "\n".join(
        (
            f"helm repo add llm-d-modelservice {ms['repository']}",
            f"kubectl create secret generic {HF_SECRET} --from-literal=HF_TOKEN=<your token>",
            f"kubectl create secret generic {API_KEY_SECRET['name']} "
            f"--from-literal={API_KEY_SECRET['key']}=<your key>",
            f"helm install kv-offload-ms {ms['chart']} --version {MODELSERVICE} "
            "-f llm-d/modelservice-values.yaml",
            f"helm install kv-offload-pool {pool['chart']} --version {INFERENCEPOOL} "
            "-f llm-d/inferencepool-values.yaml",
        )
    )


def render(d: Deployment) -> Rendered:
    """``llm-d/modelservice-values.yaml`` and ``llm-d/inferencepool-values.yaml``, or a
    note why there are none (no CPU tier, pipeline or data parallelism)."""
    if not d.has_cpu_tier:
        return Rendered(
            "llm-d", (), ("The plan has no CPU tier, so no llm-d values for CPU-tier routing.",)
        )
    if d.multi_node or d.data_parallel_size > 1:
        return Rendered(
            "llm-d",
            (),
            (
                "No llm-d values: a modelservice decode pod is one instance on one node, "
                "and this plan needs pipeline or data parallelism across its GPUs.",
            ),
        )
    files = (
        BundleFile(
            "llm-d/modelservice-values.yaml",
            yaml.safe_dump(modelservice_values(d), sort_keys=False, width=1000),
        ),
        BundleFile(
            "llm-d/inferencepool-values.yaml",
            yaml.safe_dump(inferencepool_values(d), sort_keys=False, width=1000),
        ),
    )
    notes = (
        f"llm-d: install with Helm, the llm-d-modelservice chart {MODELSERVICE} for the "
        f"{len(d.heads)} vLLM pod(s) and the inferencepool chart {INFERENCEPOOL} for the "
        "prefix-aware scheduler, whose HTTPRoute attaches the pool to the Gateway "
        f"{GATEWAY!r} (a Gateway API gateway of that name, with the inference extension, "
        "must exist in the namespace):\n\n```sh\n" + install_script(d) + "\n```",
        f"llm-d: the scheduler's CPU prefix-cache scorer tracks {cpu_tier_blocks(d):,} "
        f"blocks of {BLOCK_TOKENS} tokens per pod (the plan's "
        f"{d.conversations_per_instance:,} conversations of {d.context_tokens:,} tokens); "
        "vLLM reports no CPU-tier metric, so this is set by hand.",
    )
    return Rendered("llm-d", files, notes)
