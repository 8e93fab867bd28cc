"""LMCache 0.5.6 multiprocess server (``lmcache server``) and its vLLM connector.

Units and scopes (``lmcache/cli/commands/server.py``, ``lmcache/v1/distributed/config.py``,
``lmcache/integration/vllm/lmcache_mp_connector.py``; engine_flags.md §2.2):

- ``--l1-size-gb`` is **GiB** (the code multiplies by 2^30 although the help says GB)
  and is the whole server's L1; it requires ``--eviction-policy``.
- The bundle runs one server per engine instance on each node it spans, bound to the
  instance's NUMA nodes, because the connector reaches its server on ``localhost``; so
  ``--l1-size-gb`` is what that node's stage of the instance writes (rounded up to
  0.01 GiB): every TP worker's piece, or for MLA one copy of the stage's latent, which
  only the stage's first rank writes (``lmcache/integration/vllm/
  vllm_multi_process_adapter.py`` ``ParallelStrategy``; :mod:`sizing.memory.rank_bytes`). Each
  data-parallel rank has its own server.
- ``--l2-adapter`` entries are ordered: ``fs_native`` on the NVMe mount with
  ``max_capacity_gb`` (GiB) and an LRU ``eviction`` block, then the shared tier (``s3``
  with ``s3_endpoint``/``s3_region``, or ``fs`` on NFS), marked ``shared``. There is no
  ``disk`` adapter type.
- vLLM side: ``LMCacheMPConnector`` with ``lmcache.mp.host``/``lmcache.mp.port`` of the
  instance's server. ``--kv-offloading-backend lmcache`` would ignore any size, so the
  explicit connector is emitted. ``--hash-algorithm`` and ``lmcache.mp.hash_algorithm``
  must match (``blake3``). ``lmcache.mp.save_decode_cache`` follows the tier options'
  ``offload_decode`` (the connector's default is false, ``lmcache_mp_connector.py``).
"""

from __future__ import annotations

import json
from typing import Any

from sizing.engines import flags, shell
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.engines.lmcache import CHUNK_TOKENS, gib_per_worker
from sizing.engines.placement import Slot
from sizing.engines.vllm import (
    engine_env,
    key_steps,
    not_launched,
    parallel_notes,
    role,
    serve_argv,
)

SERVER_PORT = 5555
"""First ZMQ port (LMCache's default); instance ``i`` uses ``5555 + i``."""
HTTP_PORT = 8080
"""First admin HTTP port (LMCache's default); instance ``i`` uses ``8080 + i``."""
HASH_ALGORITHM = "blake3"


def l2_adapters(d: Deployment, slot: Slot) -> list[dict[str, Any]]:
    """The ordered ``--l2-adapter`` documents of one server (its node's share)."""
    adapters: list[dict[str, Any]] = []
    if d.has_nvme:
        share = d.nvme_bytes_per_instance * len(slot.worker_ranks) // d.world_size
        adapters.append(
            {
                "type": "fs_native",
                "base_path": f"{d.tiers.nvme_mount}/lmcache-mp/{slot.name}",
                "max_capacity_gb": gib_per_worker(share, 1),
                "eviction": {"eviction_policy": "LRU"},
            }
        )
    if d.shared == "s3":
        adapters.append(
            {
                "type": "s3",
                "s3_endpoint": d.tiers.s3_virtual_host_url,
                "s3_region": d.tiers.s3_region,
                "shared": True,
                **({} if d.tiers.s3_tls else {"disable_tls": True}),
            }
        )
    elif d.shared == "nfs":
        adapters.append(
            {"type": "fs", "base_path": d.tiers.shared_dir("lmcache-mp"), "shared": True}
        )
    version = d.versions.lmcache
    for adapter in adapters:
        flags.require("lmcache", version, "l2_adapter_types", [adapter["type"]])
        flags.require("lmcache", version, "l2_adapter", adapter)
        flags.require("lmcache", version, "l2_eviction", adapter.get("eviction", {}))
    return adapters


def server_argv(d: Deployment, slot: Slot) -> list[str]:
    """``lmcache server`` for one instance."""
    argv = [
        "lmcache",
        "server",
        "--port",
        str(SERVER_PORT + slot.index),
        "--http-port",
        str(HTTP_PORT + slot.index),
        "--l1-size-gb",
        f"{gib_per_worker(d.lmcache_server_bytes(slot), 1):g}",
        "--eviction-policy",
        "LRU",
        "--chunk-size",
        str(CHUNK_TOKENS),
        "--hash-algorithm",
        HASH_ALGORITHM,
    ]
    for adapter in l2_adapters(d, slot):
        argv += ["--l2-adapter", json.dumps(adapter, separators=(",", ":"))]
    flags.require("lmcache", d.versions.lmcache, "server_cli", flags.cli_flags(argv))
    return argv


def connector(d: Deployment, slot: Slot) -> dict[str, Any]:
    """The vLLM ``--kv-transfer-config`` pointing at the instance's server; decode
    blocks are stored only with ``offload_decode`` (``lmcache.mp.save_decode_cache``,
    false by default in the connector)."""
    return {
        "kv_connector": "LMCacheMPConnector",
        "kv_role": "kv_both",
        "kv_connector_extra_config": {
            "lmcache.mp.host": "tcp://localhost",
            "lmcache.mp.port": SERVER_PORT + slot.index,
            "lmcache.mp.hash_algorithm": HASH_ALGORITHM,
            "lmcache.mp.save_decode_cache": d.tiers.offload_decode,
        },
    }


def render(d: Deployment) -> Rendered:
    """Per instance: ``lmcache-server.sh`` (start first) and ``serve.sh``."""
    if not d.has_cpu_tier:
        return Rendered("lmcache-server", (), ("The plan has no CPU tier, so no LMCache server.",))
    if not d.launch_supported:
        return Rendered("lmcache-server", (), (not_launched("LMCache server"),))
    files: list[BundleFile] = []
    for slot in d.slots:
        folder = f"node{slot.node}/lmcache-server/{slot.name}"
        server = server_argv(d, slot)
        conn = connector(d, slot)
        flags.require(
            "lmcache",
            d.versions.lmcache,
            "mp_connector_extra_config",
            conn["kv_connector_extra_config"],
        )
        argv = serve_argv(d, slot, conn)
        files.append(
            BundleFile(
                f"{folder}/lmcache-server.sh",
                shell.script(
                    title=f"LMCache {d.versions.lmcache} server for {slot.host} {slot.name}",
                    comments=(
                        f"Serves the workers of {role(d, slot)} on this node.",
                        "--l1-size-gb is GiB (2^30 bytes) for the whole server.",
                    ),
                    exec_argv=[*slot.numactl, *server],
                ),
                executable=True,
            )
        )
        files.append(
            BundleFile(
                f"{folder}/serve.sh",
                shell.script(
                    title=f"vLLM {d.versions.vllm}, LMCacheMPConnector, {slot.host} {slot.name}",
                    comments=(f"Runs {role(d, slot)}.", "Start lmcache-server.sh first."),
                    env=engine_env(d, slot),
                    steps=key_steps(slot),
                    exec_argv=[*slot.numactl, *argv],
                ),
                executable=True,
            )
        )
    notes = (
        *parallel_notes(d),
        "One LMCache server per engine instance and node, bound to the same NUMA nodes; "
        "--l1-size-gb is the instance's CPU tier on that node in GiB.",
    )
    return Rendered("lmcache-server", tuple(files), notes)
