"""Where each engine instance runs: its GPUs, its NUMA nodes, its port, its node rank.

Rules (docs/sizing.md §4; sizing article):

- An instance's pinned offload buffer belongs in the memory of the socket its GPUs are
  attached to; bind the instance with ``numactl --cpunodebind=N --membind=N``
  (numactl(8)) and expose its cards with ``CUDA_VISIBLE_DEVICES`` (CUDA C Programming
  Guide, "CUDA Environment Variables").
- Instances take consecutive GPUs (instance ``i`` of TP size ``t`` gets cards
  ``i·t … i·t+t−1``). On dual-socket GPU servers half of the cards hang off each CPU's
  PCIe root complex, so card ``g`` is planned on NUMA node ``g // (gpus / sockets)``.
  That wiring differs between chassis: ``nvidia-smi topo -m`` (its "NUMA Affinity"
  column) and ``/sys/bus/pci/devices/<bus id>/numa_node`` confirm it before anything
  starts; the bundle's check script fails when they disagree.
- An instance whose cards span sockets is bound to all of their nodes, and each of its
  worker processes to its own card's node (:attr:`Slot.gpu_numa`; the engines' own
  per-worker binding, see ``sizing/engines/vllm.py`` and ``sglang.py``).
- Pipeline parallel (``sizing.layout.parallelism``): a replica of ``TP × PP`` GPUs runs one stage
  per node, so it has one :class:`Slot` on each of ``PP`` consecutive nodes; stage
  ``s`` holds global worker ranks ``s·TP … s·TP+TP−1`` (vLLM's rank order
  ``DP × PP × TP``, ``vllm/distributed/parallel_state.py``). Stage 0 is the head: it
  serves the API; the other stages run workers only.
- Expert parallel: the replicas of a node are the data-parallel ranks of one engine
  (``sizing.layout.parallelism``); each rank keeps its own GPUs and its own slot, numbered by its
  global DP rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.engines import shell

BASE_PORT = 8100
"""HTTP port of instance 0 on a node; instance ``i`` listens on ``BASE_PORT + i`` (every
script, the router's backends and the quote's engine appendix read it from the slot)."""


@dataclass(frozen=True)
class Slot:
    """One engine instance (or one pipeline stage of it) on one node.

    Attributes:
        node: node number, from 1.
        index: instance number on its node, from 0 (the same on every node of a
            pipeline-parallel instance).
        gpu_ids: CUDA device indices of its cards on that node.
        numa_nodes: NUMA nodes (sockets) its cards are attached to.
        port: HTTP port of the engine's OpenAI-compatible server (head stage).
        stage: pipeline stage on this node, which is also the node rank within the
            instance (0: the head).
        stages: pipeline stages of the instance (PP), one per node.
        gpu_numa: NUMA node of each card in ``gpu_ids``, in the same order.
        dp_rank: global data-parallel rank of an expert-parallel engine, ``None``
            without data parallelism.
    """

    node: int
    index: int
    gpu_ids: tuple[int, ...]
    numa_nodes: tuple[int, ...]
    port: int
    stage: int = 0
    stages: int = 1
    gpu_numa: tuple[int, ...] = ()
    dp_rank: int | None = None

    @property
    def name(self) -> str:
        """``instance0``, ``instance1``… (unique on a node)."""
        return f"instance{self.index}"

    @property
    def host(self) -> str:
        """Host name placeholder of the node (``node1``…)."""
        return f"node{self.node}"

    @property
    def is_head(self) -> bool:
        """Whether this slot runs stage 0 (the API server)."""
        return self.stage == 0

    @property
    def head_host(self) -> str:
        """Host name placeholder of the instance's head node."""
        return f"node{self.node - self.stage}"

    @property
    def worker_ranks(self) -> tuple[int, ...]:
        """Global worker ranks (within the instance) running on this node."""
        tp = len(self.gpu_ids)
        return tuple(range(self.stage * tp, (self.stage + 1) * tp))

    @property
    def spans_sockets(self) -> bool:
        """Whether the slot's cards sit on more than one NUMA node."""
        return len(self.numa_nodes) > 1

    @property
    def cuda_visible_devices(self) -> str:
        """Value of ``CUDA_VISIBLE_DEVICES`` (``"0"``, ``"0,1"``)."""
        return ",".join(str(g) for g in self.gpu_ids)

    @property
    def numactl(self) -> list[str]:
        """``numactl`` prefix binding CPUs and memory to the cards' NUMA nodes."""
        nodes = ",".join(str(n) for n in self.numa_nodes)
        return ["numactl", f"--cpunodebind={nodes}", f"--membind={nodes}"]


def numa_node_of_gpu(gpu: int, *, gpus_per_node: int, sockets: int) -> int:
    """Planned NUMA node of card ``gpu`` (even split over the sockets, see module doc).

    Raises:
        ValueError: if ``gpu`` is outside ``0 … gpus_per_node − 1`` or sockets < 1.
    """
    if sockets < 1:
        raise ValueError(f"sockets must be at least 1, got {sockets}")
    if not 0 <= gpu < gpus_per_node:
        raise ValueError(f"gpu must be between 0 and {gpus_per_node - 1}, got {gpu}")
    per_socket = math.ceil(gpus_per_node / sockets)
    return min(gpu // per_socket, sockets - 1)


def slots(
    *,
    nodes: int,
    gpus_per_node: int,
    tensor_parallel_size: int,
    replicas_per_node: int,
    sockets: int,
    pipeline_parallel_size: int = 1,
    data_parallel: bool = False,
    base_port: int = BASE_PORT,
) -> tuple[Slot, ...]:
    """Lay the instances of every node onto GPUs, NUMA nodes, ports and node ranks.

    Nodes form groups of ``pipeline_parallel_size`` consecutive nodes; in a group,
    node ``k`` runs stage ``k`` of each of its ``replicas_per_node`` instances (see
    module doc). With ``data_parallel`` each instance is one data-parallel rank,
    numbered over all groups.

    Raises:
        ValueError: if the instances need more GPUs than a node has, or ``nodes`` is
            not a multiple of ``pipeline_parallel_size``.
    """
    if tensor_parallel_size * replicas_per_node > gpus_per_node:
        raise ValueError(
            f"{replicas_per_node} instances of {tensor_parallel_size} GPUs do not fit "
            f"{gpus_per_node} GPUs per node"
        )
    pp = pipeline_parallel_size
    if pp < 1 or nodes % pp:
        raise ValueError(f"{nodes} nodes cannot hold pipelines of {pp} stages, one per node")
    out = []
    for node in range(1, nodes + 1):
        group, stage = divmod(node - 1, pp)
        for index in range(replicas_per_node):
            gpus = tuple(range(index * tensor_parallel_size, (index + 1) * tensor_parallel_size))
            per_gpu = tuple(
                numa_node_of_gpu(g, gpus_per_node=gpus_per_node, sockets=sockets) for g in gpus
            )
            out.append(
                Slot(
                    node=node,
                    index=index,
                    gpu_ids=gpus,
                    numa_nodes=tuple(sorted(set(per_gpu))),
                    port=base_port + index,
                    stage=stage,
                    stages=pp,
                    gpu_numa=per_gpu,
                    dp_rank=group * replicas_per_node + index if data_parallel else None,
                )
            )
    return tuple(out)


def buffer_gib_per_socket(
    node_slots: tuple[Slot, ...], per_instance_gib: float
) -> dict[int, float]:
    """Pinned buffer each socket holds when every worker binds to its card's node.

    A pipeline-parallel instance holds ``1/PP`` of its buffer on each of its nodes
    (every worker allocates its share, engine_flags.md §1.2); on a node the share is
    spread over the cards, each on its card's NUMA node.
    """
    out: dict[int, float] = {}
    for slot in node_slots:
        per_gpu = per_instance_gib / slot.stages / len(slot.gpu_ids)
        numa = slot.gpu_numa or tuple(slot.numa_nodes[0] for _ in slot.gpu_ids)
        for n in numa:
            out[n] = out.get(n, 0.0) + per_gpu
    return out


def topology_check_script(node_slots: tuple[Slot, ...]) -> str:
    """A bash script that prints ``nvidia-smi topo -m`` and checks every card's NUMA node.

    It reads each card's PCI bus id from ``nvidia-smi --query-gpu=pci.bus_id`` and its
    NUMA node from sysfs, and exits 1 naming every card that sits elsewhere than planned.
    """
    expected: dict[int, int] = {}
    for slot in node_slots:
        numa = slot.gpu_numa or tuple(-2 for _ in slot.gpu_ids)
        for gpu, want in zip(slot.gpu_ids, numa, strict=True):
            expected[gpu] = want
    lines = [
        shell.SHEBANG,
        "# Run first on this node: shows the GPU/NIC/CPU topology and checks that every",
        "# card sits on the NUMA node its instance (or its worker) is bound to.",
        "set -euo pipefail",
        "nvidia-smi topo -m",
        "status=0",
        "check() {",
        "  local bus node",
        '  bus="$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i "$1")"',
        '  bus="$(printf %s "${bus: -12}" | tr "A-F" "a-f")"',
        '  node="$(cat "/sys/bus/pci/devices/${bus}/numa_node")"',
        '  if [ "$2" = "any" ] || [ "$node" = "$2" ]; then',
        '    echo "GPU $1: NUMA node $node (as planned)"',
        "  else",
        '    echo "GPU $1 is on NUMA node $node, planned $2: change the numactl binding"',
        "    status=1",
        "  fi",
        "}",
    ]
    for gpu in sorted(expected):
        want = expected[gpu]
        lines.append(f"check {gpu} {'any' if want == -2 else want}")
    lines.append('exit "$status"')
    return "\n".join(lines) + "\n"
