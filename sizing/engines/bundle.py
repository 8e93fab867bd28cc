"""The whole deployment: every engine's files plus placement, mounts and router.

Composes the engine modules for the engines asked for. Placement (topology check),
NVMe and shared-tier mounts and the router come with every engine that needs them.
Sources are in each module's docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sizing.engines import (
    dynamo,
    llmd,
    lmcache,
    lmcache_server,
    placement,
    router,
    sglang,
    vllm,
)
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.engines.shared_tier import (
    dumps,
    nfs_mount_script,
    nvme_mount_script,
    s3_lifecycle,
    s3_setup_script,
)
from sizing.errors import SizingError

ENGINES = ("vllm", "lmcache", "lmcache-server", "sglang", "dynamo", "llm-d")
"""Engine keys of ``--engine`` (``all`` means every one)."""

_RENDERERS: dict[str, Callable[[Deployment], Rendered]] = {
    "vllm": vllm.render,
    "lmcache": lmcache.render,
    "lmcache-server": lmcache_server.render,
    "sglang": sglang.render,
    "dynamo": dynamo.render,
    "llm-d": llmd.render,
}


def engines_for(choice: str) -> tuple[str, ...]:
    """Engine keys for an ``--engine`` value.

    Raises:
        SizingError: for an unknown value (field ``engine``).
    """
    if choice == "all":
        return ENGINES
    if choice not in ENGINES:
        raise SizingError(
            "engine", f"engine must be one of {', '.join((*ENGINES, 'all'))}, got {choice!r}"
        )
    return (choice,)


def hybrid_note(d: Deployment) -> str:
    """The caveat for a hybrid model (linear-attention or Mamba layers).

    Source: vLLM's blog of 8 January 2026 (seed) called hybrid models not yet optimised
    for the offloading connector; its September 2026 post lists DeepSeek V4, GLM 5.3 and
    Nemotron 3 among the hybrid architectures the tiered framework (vLLM 0.22 and later)
    supports. Support therefore depends on the release that runs.
    """
    v = d.versions
    return (
        f"{d.model_id} is a hybrid model (linear-attention or Mamba layers with a fixed "
        "state per conversation): whether each engine offloads its state depends on the "
        "engine release. vLLM's tiered offloading supports some hybrid architectures from "
        f"0.22 on; test this model with the releases this bundle targets (vLLM {v.vllm}, "
        f"LMCache {v.lmcache}, SGLang {v.sglang}, Dynamo {v.dynamo}) before relying on "
        "the tier."
    )


def pinned_bytes(d: Deployment, engine: str) -> int:
    """Host memory ``engine`` (a key of :data:`ENGINES`) pins for one instance's tier,
    bytes: its own allocation of the plan's conversations
    (:meth:`sizing.memory.rank_bytes.RankBytes.engine_bytes`; the LMCache server keeps one copy
    per stage for MLA, :meth:`~sizing.memory.rank_bytes.RankBytes.lmcache_server_bytes`)."""
    kept = d.conversations_per_instance
    if not kept:
        return 0
    if engine == "lmcache-server":
        stages = range(len(d.ranks.stages))
        return sum(d.ranks.lmcache_server_bytes(kept, stage) for stage in stages)
    return d.ranks.engine_bytes(engine, kept)


def infrastructure(
    d: Deployment, *, shared_used: bool = True, pinned_bytes_per_instance: int | None = None
) -> Rendered:
    """Topology checks per node, NVMe and NFS mounts, S3 bucket settings.

    ``shared_used`` is false when no chosen engine can use the shared tier (Dynamo
    alone); then no mount or bucket file is emitted. ``pinned_bytes_per_instance`` is
    what the largest of the chosen engines pins per instance (default: what all ranks
    store, the most any engine allocates); each socket's share is checked against its
    DIMMs, so a plan sized for vLLM warns when SGLang is rendered for an MLA model.
    """
    pinned = (
        d.cpu_bytes_per_instance if pinned_bytes_per_instance is None else pinned_bytes_per_instance
    )
    files: list[BundleFile] = []
    notes: list[str] = []
    for node in d.nodes:
        node_slots = d.node_slots(node)
        files.append(
            BundleFile(
                f"node{node}/check-topology.sh",
                placement.topology_check_script(node_slots),
                executable=True,
            )
        )
        if d.has_nvme:
            files.append(
                BundleFile(
                    f"node{node}/mount-nvme.sh",
                    nvme_mount_script(d.tiers, drive_count=d.nvme_drive_count),
                    executable=True,
                )
            )
        if d.shared == "nfs" and shared_used:
            files.append(
                BundleFile(
                    f"node{node}/mount-shared.sh", nfs_mount_script(d.tiers), executable=True
                )
            )
        per_socket = placement.buffer_gib_per_socket(node_slots, pinned / 2**30)
        for socket, gib in sorted(per_socket.items()):
            if gib * 2**30 > d.socket_memory_gb * 10**9:
                notes.append(
                    f"Node {node}: socket {socket} would pin {gib:.0f} GiB, more than its "
                    f"{d.socket_memory_gb} GB of DIMMs."
                )
    if d.shared == "nfs" and shared_used and d.tiers.nfs_server_note:
        notes.append(d.tiers.nfs_server_note)
    if d.shared == "s3" and shared_used:
        files.append(BundleFile("shared/s3-lifecycle.json", dumps(s3_lifecycle(d.tiers))))
        files.append(BundleFile("shared/s3-setup.sh", s3_setup_script(d.tiers), executable=True))
    if d.hybrid:
        notes.append(hybrid_note(d))
    if d.shared != "none" and shared_used:
        notes.append(
            f"Every instance sharing the {d.shared.upper()} tier runs with "
            f"PYTHONHASHSEED={d.tiers.python_hash_seed} and the same hash algorithm."
        )
    return Rendered("infrastructure", tuple(files), tuple(notes))


def render(d: Deployment, engines: Sequence[str]) -> tuple[Rendered, ...]:
    """Render ``engines`` (keys of :data:`ENGINES`) for ``d``.

    Returns:
        One :class:`Rendered` per engine, then the router (when any vLLM-based engine
        runs several instances) and the infrastructure files.

    Raises:
        SizingError: for an unknown engine key; for a shared tier when the plan has no
            CPU tier (field ``shared``): every engine reaches a shared tier through its
            CPU tier (vLLM's ``secondary_tiers`` sit behind ``cpu_bytes_to_use``,
            LMCache's remote backend needs its local CPU buffer,
            ``lmcache/v1/storage_backend/__init__.py``; HiCache's storage backend
            writes from the host pool), so nothing would write to it.
    """
    if d.shared != "none" and not d.has_cpu_tier:
        raise SizingError(
            "shared",
            f"shared tier {d.shared!r} would stay unused: the plan keeps every conversation "
            "in GPU memory, so no engine gets a CPU tier, and every engine writes to a "
            "shared tier only through its CPU tier; build the bundle with --shared none",
        )
    out = []
    for key in engines:
        engines_for(key)
        out.append(_RENDERERS[key](d))
    vllm_based = {"vllm", "lmcache", "lmcache-server"} & set(engines)
    if vllm_based:
        out.append(router.render(d, helm="lmcache" in engines))
    pinned = max((pinned_bytes(d, key) for key in engines), default=0)
    # Dynamo writes no KV to a shared tier, but across nodes its file discovery lives
    # on the NFS mount (sizing.engines.dynamo.discovery_dir), which must then be mounted.
    dynamo_discovery = "dynamo" in engines and d.shared == "nfs" and len(d.nodes) > 1
    shared_used = bool(set(engines) - {"dynamo", "llm-d"}) or dynamo_discovery
    out.append(infrastructure(d, shared_used=shared_used, pinned_bytes_per_instance=pinned))
    return tuple(out)
