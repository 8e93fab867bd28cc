"""LMCache 0.5.6 in-process (``LMCacheConnectorV1``): the YAML and the vLLM flag.

Units and scopes (``lmcache/v1/config.py``, ``cache_engine.py``,
``local_cpu_backend.py``, ``local_disk_backend.py``; engine_flags.md §2.1):

- One LMCache engine runs in every vLLM worker process, so ``max_local_cpu_size`` and
  ``max_local_disk_size`` are **GiB per worker** (per TP rank): each worker keeps its
  own heads and its own stage's layers, so each node's YAML gives what one worker of
  its stage keeps of the instance's conversations, rounded up to 0.01 GiB.
- MLA (``lmcache/v1/cache_engine.py``, 0.5.6 wheel): only the first rank saves
  (``save_only_first_rank``, true by default for MLA), with
  ``extra_config.first_rank_max_local_cpu_size`` GiB, which the bundle sets to the whole
  latent of the instance's conversations. Every other rank still allocates
  ``max_local_cpu_size`` (``_Create_memory_allocator``), and no rank starts its CPU
  backend when that is 0 (``storage_backend/__init__.py``), so the other ranks get the
  least that keeps the backend: one chunk of the stage's latent, rounded up to 0.01 GiB
  (:func:`other_ranks_gib`). With pipeline parallel the first
  rank is worker 0 of the whole instance, so the bundle sets ``save_only_first_rank``
  false and every worker keeps its own stage's latent (:mod:`sizing.memory.rank_bytes`).
- ``save_decode_cache`` (default false): decode blocks are stored only when the tier
  options ask for them (``TierOptions.offload_decode``), as vLLM's
  ``offload_prompt_only``.
- The disk tier is on only when ``local_disk`` is set and ``max_local_disk_size`` > 0.
- Shared tier: S3 has no plugin form, only ``remote_url: s3://<bucket>.<host>`` with
  ``extra_config.s3_region`` (required); NFS uses the ``fs`` remote storage plugin with
  ``remote_storage_plugin.fs.base_path``.
- vLLM side: ``--kv-transfer-config {"kv_connector":"LMCacheConnectorV1",...}`` and the
  YAML named by ``LMCACHE_CONFIG_FILE``.
- A shared cache needs the same ``PYTHONHASHSEED`` on every instance (LMCache docs on
  ``pre_caching_hash_algorithm``, whose default ``builtin`` is kept).
- Parallelism as for vLLM native (``sizing/engines/vllm.py``): a pipeline-parallel
  instance has ``TP × PP`` workers, ``TP`` on each node, each with its own LMCache
  engine of ``max_local_cpu_size``; each data-parallel rank has its own workers.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from sizing.engines import flags, shell
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.engines.placement import Slot
from sizing.engines.vllm import (
    engine_env,
    key_steps,
    not_launched,
    parallel_notes,
    prompt_only_note,
    role,
    serve_argv,
)
from sizing.units import GIB

CHUNK_TOKENS = 256
"""``chunk_size`` (LMCache's default, pinned so every instance chunks alike)."""


def gib_per_worker(total_bytes: int, world_size: int) -> float:
    """``total_bytes`` split over ``world_size`` workers, GiB rounded up to 0.01.

    Raises:
        ValueError: if ``world_size`` < 1 or ``total_bytes`` < 0.
    """
    if world_size < 1 or total_bytes < 0:
        raise ValueError("world_size must be >= 1 and total_bytes >= 0")
    return math.ceil(total_bytes / world_size / GIB * 100 - 1e-6) / 100


def other_ranks_gib(d: Deployment, stage: int = 0) -> float:
    """``max_local_cpu_size`` of the ranks that save nothing (MLA, first rank only):
    one ``chunk_size`` chunk of the stage's latent per rank, GiB rounded up to 0.01."""
    per_token = d.ranks.stages[stage].conversation_bytes / d.context_tokens
    return gib_per_worker(math.ceil(per_token * CHUNK_TOKENS), 1)


def config(d: Deployment, slot: Slot) -> dict[str, Any]:
    """The LMCache YAML of one instance's workers on ``slot``'s node (per-worker sizes
    of that pipeline stage)."""
    instance = slot.name
    cpu_gib = gib_per_worker(d.rank_tier_bytes(slot.stage), 1)
    first_rank_only = d.ranks.lmcache_first_rank_only
    doc: dict[str, Any] = {
        "chunk_size": CHUNK_TOKENS,
        "local_cpu": True,
        "max_local_cpu_size": other_ranks_gib(d, slot.stage) if first_rank_only else cpu_gib,
        "pre_caching_hash_algorithm": "builtin",
        "save_decode_cache": d.tiers.offload_decode,
    }
    extra: dict[str, Any] = {}
    if first_rank_only:
        extra = {"save_only_first_rank": True, "first_rank_max_local_cpu_size": cpu_gib}
    elif d.ranks.uses_mla:
        extra = {"save_only_first_rank": False}
    if d.has_nvme:
        doc["local_disk"] = f"file://{d.tiers.nvme_mount}/lmcache/{instance}/"
        doc["max_local_disk_size"] = gib_per_worker(d.nvme_bytes_per_instance, d.world_size)
    if d.shared == "s3":
        doc["remote_url"] = d.tiers.s3_virtual_host_url
        doc["remote_serde"] = "naive"
        extra["s3_region"] = d.tiers.s3_region
        extra.update(d.tiers.lmcache_s3_client())
        if not d.tiers.s3_tls:
            extra["disable_tls"] = True
    elif d.shared == "nfs":
        doc["remote_storage_plugins"] = ["fs"]
        doc["remote_serde"] = "naive"
        extra["remote_storage_plugin.fs.base_path"] = d.tiers.shared_dir("lmcache")
    if extra:
        doc["extra_config"] = extra
    flags.require("lmcache", d.versions.lmcache, "yaml", doc)
    flags.require("lmcache", d.versions.lmcache, "extra_config", doc.get("extra_config", {}))
    return doc


CONNECTOR = {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}


def s3_client_note(d: Deployment) -> str:
    """What the README says about LMCache's S3 client settings and addressing."""
    host = d.tiers.s3_host.split(":", 1)[0]
    addressing = (
        f"LMCache addresses the bucket virtual-hosted style ({d.tiers.s3_bucket}.{host}): "
        f"{d.tiers.s3_bucket}.{host} must resolve to the endpoint"
    )
    if d.tiers.s3_is_aws:
        return addressing + "; LMCache's S3 client defaults (HTTP/2, 64 I/O threads) are kept."
    return (
        addressing + ", and on StorageGRID the endpoint domain name must be configured "
        "for virtual-hosted requests. As in the NetApp StorageGRID example, LMCache's S3 "
        "client runs with s3_prefer_http2: false and s3_num_io_threads: 320."
    )


def worker_comment(d: Deployment, doc: dict[str, Any], slot: Slot) -> str:
    """The script comment that states the YAML's per-worker sizes."""
    extra = doc.get("extra_config", {})
    if "first_rank_max_local_cpu_size" in extra:
        return (
            f"GiB per worker: the first rank {extra['first_rank_max_local_cpu_size']}, the "
            f"other {d.world_size - 1} {doc['max_local_cpu_size']} each (MLA, first rank saves)."
        )
    return (
        f"max_local_cpu_size is GiB per worker: {doc['max_local_cpu_size']} "
        f"× {d.world_size} worker(s), {len(slot.worker_ranks)} on this node."
    )


def render(d: Deployment) -> Rendered:
    """Per instance: ``lmcache.yaml`` and ``serve.sh`` (vLLM with ``LMCacheConnectorV1``)."""
    if not d.has_cpu_tier:
        return Rendered("lmcache", (), ("The plan has no CPU tier, so no LMCache config.",))
    if not d.launch_supported:
        return Rendered("lmcache", (), (not_launched("LMCache"),))
    files: list[BundleFile] = []
    for slot in d.slots:
        folder = f"node{slot.node}/lmcache/{slot.name}"
        doc = config(d, slot)
        argv = serve_argv(d, slot, CONNECTOR)
        flags.require("vllm", d.versions.vllm, "kv_transfer_config", CONNECTOR)
        env = engine_env(d, slot)
        flags.require("lmcache", d.versions.lmcache, "env", [*env, "LMCACHE_CONFIG_FILE"])
        files.append(BundleFile(f"{folder}/lmcache.yaml", yaml.safe_dump(doc, sort_keys=False)))
        files.append(
            BundleFile(
                f"{folder}/serve.sh",
                shell.script(
                    title=f"vLLM {d.versions.vllm} + LMCache {d.versions.lmcache} in-process, "
                    f"{slot.host} {slot.name}",
                    comments=(
                        f"Runs {role(d, slot)}.",
                        worker_comment(d, doc, slot),
                    ),
                    env_here={"LMCACHE_CONFIG_FILE": "lmcache.yaml"},
                    env=env,
                    steps=key_steps(slot),
                    exec_argv=[*slot.numactl, *argv],
                ),
                executable=True,
            )
        )
    notes = [
        *parallel_notes(d),
        "LMCache in-process sizes are per worker (TP × PP ranks): each worker keeps its "
        "own share of every conversation in max_local_cpu_size GiB.",
        prompt_only_note(d),
    ]
    if d.ranks.lmcache_first_rank_only:
        notes.append(
            "MLA: LMCache saves the latent on the first rank only "
            "(first_rank_max_local_cpu_size); the other ranks save nothing and get "
            "max_local_cpu_size of one chunk, the least with which LMCache starts its CPU "
            "backend."
        )
    if d.shared == "s3":
        notes.append(
            "LMCache 0.5.6 reaches S3 only through remote_url (deprecated in 0.5.x, but S3 "
            "has no plugin form); credentials come from the AWS default chain."
        )
        notes.append(s3_client_note(d))
    return Rendered("lmcache", tuple(files), tuple(notes))
