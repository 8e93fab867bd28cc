"""vLLM native KV offloading (``OffloadingConnector``).

Units and scopes (vLLM 0.31.0 and 0.33.0 wheels: ``vllm/engine/arg_utils.py``,
``vllm/config/vllm.py::_post_init_kv_transfer_config``, ``vllm/v1/kv_offload/``):

- ``--kv-offloading-size`` is a float in **GiB**, the total buffer of one engine
  instance summed over its TP × PP workers; vLLM turns it into
  ``cpu_bytes_to_use = size × 2^30``.
- ``cpu_bytes_to_use`` in ``kv_connector_extra_config`` is in **bytes**, total across
  workers, and required in the full ``--kv-transfer-config`` form. vLLM divides it by
  each worker's page bytes × world size (``vllm/v1/kv_offload/cpu/spec.py``), so the
  value is the binding worker's share × TP × PP; an MLA latent on one node is stored
  once (:mod:`sizing.memory.rank_bytes`).

- With an NVMe or shared tier the full form uses ``spec_name: TieringOffloadingSpec``
  and ordered ``secondary_tiers`` (tier 0 is consulted first): an ``fs`` tier with
  ``root_dir`` on the drive's mount, then ``fs`` on the NFS mount or ``obj`` for S3
  (``vllm/v1/kv_offload/tiering/factory.py``; the ``obj`` tier needs NIXL's OBJ plugin).
  The ``fs`` tier has no capacity key and vLLM never deletes its files.
- ``offload_prompt_only`` (default true, ``vllm/v1/kv_offload/base.py``): only prompt
  (prefill) blocks are offloaded, decode blocks are skipped. A returning conversation
  then finds its earlier prompts in the tier, and its last answer is recomputed unless
  it is still on the GPU. The bundle writes the key explicitly, false only when the
  tier options ask for decode blocks (``TierOptions.offload_decode``).
- Instances sharing a tier use the same ``PYTHONHASHSEED`` and
  ``--prefix-caching-hash-algo`` (``vllm/v1/core/kv_cache_utils.py``).
- The short form cannot express secondary tiers, so it is emitted only for a CPU-only
  plan.

Parallelism (flag names read from the 0.31.0 and 0.33.0 wheels: ``vllm/engine/
arg_utils.py`` ParallelConfig group, ``--headless`` in the serve CLI args; semantics in
``vllm/config/parallel.py``, ``vllm/v1/executor/multiproc_executor.py``,
``vllm/utils/numa_utils.py``, ``vllm/v1/engine/core.py``):

- Pipeline parallel over nodes uses the ``mp`` executor: every node runs the same
  ``vllm serve`` with ``--pipeline-parallel-size``, ``--nnodes``, ``--node-rank`` and
  ``--master-addr``/``--master-port`` of the head; nodes after the head add
  ``--headless`` (workers only). Node ``k`` runs global ranks ``k·TP … k·TP+TP−1``,
  i.e. stage ``k``. Every node needs the same ``--kv-transfer-config``: its workers
  read it from their own node's arguments. ``cpu_bytes_to_use`` stays the instance's
  total, of which each worker allocates ``1/(TP × PP)``.
- Expert parallel: ``--enable-expert-parallel`` with ``--data-parallel-size`` (EP =
  TP × DP). Each DP rank runs as its own process with ``--data-parallel-rank``
  (external load balancing; its API server on its own port, its own GPUs, one
  ``numactl`` per rank), so the router keeps a returning conversation on the rank
  whose CPU tier holds it. Each DP rank allocates its own ``cpu_bytes_to_use``
  (``engine_id`` gets the DP rank appended, ``core.py``), so the value is per rank.
- A worker process per GPU: when an instance's cards span sockets, ``--numa-bind``
  with ``--numa-bind-nodes`` (one NUMA node per visible GPU) binds each worker, and so
  its share of the pinned buffer, to its own card's node.

The buffer's size and rounding are the plan's (:mod:`sizing.memory.vllm_buffer`).
"""

from __future__ import annotations

import json
from typing import Any

from sizing.engines import flags, shell
from sizing.engines.api_key import API_KEY_CHECK
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.engines.placement import Slot
from sizing.engines.shared_tier import dumps
from sizing.memory.vllm_buffer import VllmOffload, offload
from sizing.units import GIB

HASH_ALGO = "sha256"
"""``--prefix-caching-hash-algo`` on every instance (vLLM's default, pinned)."""
MASTER_PORT = 29501
"""``--master-port`` of instance 0 (vLLM's default); instance ``i`` uses ``29501 + i``."""


def parallel_argv(d: Deployment, slot: Slot) -> list[str]:
    """The parallelism flags of one slot: TP, and PP, DP, EP and worker NUMA binding
    when the plan has them (see module doc)."""
    argv = ["--tensor-parallel-size", str(d.tensor_parallel_size)]
    if d.pipeline_parallel_size > 1:
        argv += [
            "--pipeline-parallel-size",
            str(d.pipeline_parallel_size),
            "--nnodes",
            str(slot.stages),
            "--node-rank",
            str(slot.stage),
            "--master-addr",
            slot.head_host,
            "--master-port",
            str(MASTER_PORT + slot.index),
        ]
    if slot.dp_rank is not None:
        argv += [
            "--data-parallel-size",
            str(d.data_parallel_size),
            "--data-parallel-rank",
            str(slot.dp_rank),
        ]
    if d.expert_parallel:
        argv.append("--enable-expert-parallel")
    if slot.spans_sockets:
        argv += ["--numa-bind", "--numa-bind-nodes", *(str(n) for n in slot.gpu_numa)]
    return argv


def base_argv(d: Deployment, slot: Slot, program: tuple[str, ...] = ("vllm", "serve")) -> list[str]:
    """``vllm serve <model>`` with the slot's port, parallelism, context and KV dtype.

    A pipeline stage after the head runs ``--headless`` (no API server, no port).
    """
    argv = [*program, d.model_id] if program == ("vllm", "serve") else [*program]
    if slot.is_head:
        argv += ["--host", "0.0.0.0", "--port", str(slot.port)]
    else:
        argv.append("--headless")
    argv += parallel_argv(d, slot)
    argv += ["--max-model-len", str(d.context_tokens)]
    if d.kv_dtype == "fp8":
        argv += ["--kv-cache-dtype", "fp8"]
    return argv


def serve_argv(
    d: Deployment, slot: Slot, kv_transfer_config: dict[str, Any] | None = None
) -> list[str]:
    """``vllm serve`` for ``slot`` with the pinned hash algorithm and, when given, the
    ``--kv-transfer-config`` (compact JSON); every flag checked against the recorded
    list for the targeted vLLM version.

    Raises:
        ValueError: a flag that vLLM version does not have (``flags.require``).
    """
    argv = [*base_argv(d, slot), "--prefix-caching-hash-algo", HASH_ALGO]
    if kv_transfer_config is not None:
        argv += ["--kv-transfer-config", json.dumps(kv_transfer_config, separators=(",", ":"))]
    flags.require("vllm", d.versions.vllm, "cli", flags.cli_flags(argv))
    return argv


def role(d: Deployment, slot: Slot) -> str:
    """What the slot runs, in words, for script comments."""
    if slot.dp_rank is not None:
        return (
            f"data-parallel rank {slot.dp_rank} of {d.data_parallel_size} "
            f"(experts over EP {d.tensor_parallel_size * d.data_parallel_size})"
        )
    if slot.stages > 1:
        kind = "head, serves the API" if slot.is_head else f"headless, start after {slot.head_host}"
        return f"pipeline stage {slot.stage} of {slot.stages} ({kind})"
    return "one engine instance"


def key_steps(slot: Slot) -> tuple[str, ...]:
    """The API-key check of a slot that serves the API (``sizing.engines.api_key``);
    headless stages serve none."""
    return (API_KEY_CHECK,) if slot.is_head else ()


def engine_env(d: Deployment, slot: Slot) -> dict[str, str]:
    """``CUDA_VISIBLE_DEVICES`` of the instance and the shared ``PYTHONHASHSEED``."""
    return {
        "CUDA_VISIBLE_DEVICES": slot.cuda_visible_devices,
        "PYTHONHASHSEED": str(d.tiers.python_hash_seed),
    }


def secondary_tiers(d: Deployment) -> list[dict[str, Any]]:
    """The ordered ``secondary_tiers`` of ``TieringOffloadingSpec`` (empty: CPU only)."""
    tiers: list[dict[str, Any]] = []
    if d.has_nvme:
        tiers.append({"type": "fs", "root_dir": f"{d.tiers.nvme_mount}/vllm"})
    if d.shared == "nfs":
        tiers.append({"type": "fs", "root_dir": d.tiers.shared_dir("vllm")})
    elif d.shared == "s3":
        tiers.append(
            {
                "type": "obj",
                "store_config": {
                    "bucket": d.tiers.s3_bucket,
                    "endpoint_override": d.tiers.s3_host,
                    "scheme": d.tiers.s3_scheme,
                    "region": d.tiers.s3_region,
                },
                "prefix": d.tiers.S3_PREFIX,
            }
        )
    return tiers


def kv_transfer_config(d: Deployment, buffer: VllmOffload) -> dict[str, Any]:
    """The full ``--kv-transfer-config`` of one instance (``OffloadingConnector``)."""
    extra: dict[str, Any] = {
        "cpu_bytes_to_use": buffer.cpu_bytes_to_use,
        "offload_prompt_only": not d.tiers.offload_decode,
    }
    tiers = secondary_tiers(d)
    if tiers:
        extra = {"spec_name": "TieringOffloadingSpec", **extra, "secondary_tiers": tiers}
    return {
        "kv_connector": "OffloadingConnector",
        "kv_role": "kv_both",
        "kv_connector_extra_config": extra,
    }


def check_transfer_config(version: str, config: dict[str, Any]) -> None:
    """Check every key of an ``OffloadingConnector`` config against the recorded names.

    Raises:
        ValueError: naming the first key vLLM ``version`` does not know.
    """
    flags.require("vllm", version, "kv_transfer_config", config)
    extra = config.get("kv_connector_extra_config", {})
    if config.get("kv_connector") == "OffloadingConnector":
        flags.require("vllm", version, "offloading_extra_config", extra)
    if "spec_name" in extra:
        flags.require("vllm", version, "spec_names", [extra["spec_name"]])
    for tier in extra.get("secondary_tiers", []):
        flags.require("vllm", version, "secondary_tier_types", [tier["type"]])
        flags.require("vllm", version, f"secondary_tier_{tier['type']}", tier)
        flags.require("vllm", version, "obj_store_config", tier.get("store_config", {}))


def _cleanup_script(root_dir: str) -> str:
    return shell.script(
        title=f"Delete offloaded KV files older than one day under {root_dir}",
        comments=(
            "vLLM's fs tier has no capacity limit and never deletes files; run this from",
            "cron (for a shared mount on one node only), e.g. every hour.",
        ),
        steps=(["find", root_dir, "-type", "f", "-name", "*.bin", "-mmin", "+1440", "-delete"],),
    )


def render(d: Deployment) -> Rendered:
    """Per instance: ``serve.sh`` (full form), ``kv-transfer-config.json`` and, for a
    CPU-only plan, ``serve-short.sh`` (``--kv-offloading-size``)."""
    version = d.versions.vllm
    if not d.launch_supported:
        return Rendered("vllm", (), (not_launched("vLLM"),))
    buffer = offload(d.vllm_native_bytes / GIB)
    files: list[BundleFile] = []
    notes: list[str] = list(parallel_notes(d))
    tiers = secondary_tiers(d)
    for slot in d.slots:
        folder = f"node{slot.node}/vllm/{slot.name}"
        env = engine_env(d, slot)
        flags.require("vllm", version, "env", env)
        argv = serve_argv(d, slot)
        if buffer is None:
            text = shell.script(
                title=f"vLLM {version}, {slot.host} {slot.name}: no CPU tier in this plan",
                env=env,
                steps=key_steps(slot),
                exec_argv=[*slot.numactl, *argv],
            )
            files.append(BundleFile(f"{folder}/serve.sh", text, executable=True))
            continue
        config = kv_transfer_config(d, buffer)
        check_transfer_config(version, config)
        full = serve_argv(d, slot, config)
        files.append(BundleFile(f"{folder}/kv-transfer-config.json", dumps(config)))
        files.append(
            BundleFile(
                f"{folder}/serve.sh",
                shell.script(
                    title=f"vLLM {version} native offloading, {slot.host} {slot.name}",
                    comments=(
                        f"Runs {role(d, slot)}.",
                        f"CPU tier: {buffer.kv_offloading_size_gib} GiB for this instance "
                        f"({buffer.cpu_bytes_to_use} bytes over its {d.world_size} worker(s),",
                        f"{len(slot.worker_ranks)} of them on this node).",
                    ),
                    env=env,
                    steps=key_steps(slot),
                    exec_argv=[*slot.numactl, *full],
                ),
                executable=True,
            )
        )
        if not tiers:
            short = [*argv, "--kv-offloading-size", str(buffer.kv_offloading_size_gib)]
            flags.require("vllm", version, "cli", flags.cli_flags(short))
            files.append(
                BundleFile(
                    f"{folder}/serve-short.sh",
                    shell.script(
                        title=f"vLLM {version}, {slot.host} {slot.name}: same buffer, short form",
                        comments=(
                            f"Runs {role(d, slot)}.",
                            "--kv-offloading-size is GiB, total over the instance's workers.",
                        ),
                        env=env,
                        steps=key_steps(slot),
                        exec_argv=[*slot.numactl, *short],
                    ),
                    executable=True,
                )
            )
    if buffer is None:
        notes.append("The plan has no CPU tier, so vLLM runs without KV offloading.")
        return Rendered("vllm", tuple(files), tuple(notes))
    fs_roots = [t["root_dir"] for t in tiers if t["type"] == "fs"]
    for node in d.nodes:
        for root in fs_roots:
            if root.startswith(d.tiers.nvme_mount) or node == d.nodes[0]:
                name = (
                    "cleanup-nvme.sh"
                    if root.startswith(d.tiers.nvme_mount)
                    else "cleanup-shared.sh"
                )
                files.append(
                    BundleFile(f"node{node}/vllm/{name}", _cleanup_script(root), executable=True)
                )
    notes.append(prompt_only_note(d))
    if tiers:
        notes.append(
            "The short form --kv-offloading-size cannot name secondary tiers, so only the "
            "full --kv-transfer-config form is emitted."
        )
    if fs_roots:
        notes.append(
            "vLLM's fs tier has no size limit and never deletes files: run the cleanup "
            "script from cron."
        )
    if d.shared == "s3":
        notes.append("The obj tier needs NIXL with its OBJ plugin installed beside vLLM.")
    return Rendered("vllm", tuple(files), tuple(notes))


def prompt_only_note(d: Deployment) -> str:
    """The README sentence on which blocks are offloaded (module doc)."""
    if d.tiers.offload_decode:
        return (
            "Decode blocks are offloaded too (offload_prompt_only: false, save_decode_cache: "
            "true): a returning conversation also finds its last answer in the tier."
        )
    return (
        "Only prompt blocks are offloaded (offload_prompt_only: true, vLLM's default; "
        "LMCache save_decode_cache: false): a returning conversation finds its earlier "
        "prompts in the tier, and its last answer is recomputed unless it is still on the "
        "GPU. Where returning users depend on long answers, build the bundle with "
        "--offload-decode."
    )


def not_launched(engine: str) -> str:
    """The README sentence for a layout the bundle does not launch (see
    :attr:`Deployment.launch_supported`)."""
    return (
        f"{engine}: no scripts for this layout. Its data-parallel ranks each span several "
        "nodes (expert parallel with pipeline parallel), and no confirmed launch places "
        "such ranks on their GPUs. Set it up by hand: per rank, the flags of a one-node "
        "rank plus --pipeline-parallel-size, --nnodes, --node-rank and --master-addr, "
        "with CUDA_VISIBLE_DEVICES naming that rank's cards on each node; or size the "
        "plan without expert parallel."
    )


def parallel_notes(d: Deployment) -> tuple[str, ...]:
    """README sentences on how the vLLM-based scripts launch the plan's parallelism."""
    notes: list[str] = []
    if d.multi_node:
        notes.append(
            f"Each instance spans {d.pipeline_parallel_size} nodes (pipeline parallel, one "
            "stage per node): start the head stage (--node-rank 0) on the first node, then "
            "the --headless stages on the others; node1, node2… in --master-addr must "
            "resolve to the nodes' addresses (or replace them)."
        )
    if d.data_parallel_size > 1:
        notes.append(
            f"Expert parallel: {d.data_parallel_size} data-parallel ranks form one engine "
            "(--enable-expert-parallel); each rank runs as its own process with its own "
            "port, GPUs and CPU tier, so start all ranks of a node together."
        )
    return tuple(notes)
