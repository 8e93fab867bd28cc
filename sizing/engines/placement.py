"""Where each engine instance runs: its GPUs, its NUMA node, its port.

Rules (DESIGN §3.3; seed document):

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
- An instance whose cards span sockets is bound to all of their nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.engines import shell


@dataclass(frozen=True)
class Slot:
    """One engine instance on one node.

    Attributes:
        node: node number, from 1.
        index: instance number on its node, from 0.
        gpu_ids: CUDA device indices of its cards on that node.
        numa_nodes: NUMA nodes (sockets) its cards are attached to.
        port: HTTP port of the engine's OpenAI-compatible server.
    """

    node: int
    index: int
    gpu_ids: tuple[int, ...]
    numa_nodes: tuple[int, ...]
    port: int

    @property
    def name(self) -> str:
        """``instance0``, ``instance1``… (unique on a node)."""
        return f"instance{self.index}"

    @property
    def host(self) -> str:
        """Host name placeholder of the node (``node1``…)."""
        return f"node{self.node}"

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
    base_port: int = 8100,
) -> tuple[Slot, ...]:
    """Lay the instances of every node onto GPUs, NUMA nodes and ports.

    Raises:
        ValueError: if the instances need more GPUs than a node has.
    """
    if tensor_parallel_size * replicas_per_node > gpus_per_node:
        raise ValueError(
            f"{replicas_per_node} instances of {tensor_parallel_size} GPUs do not fit "
            f"{gpus_per_node} GPUs per node"
        )
    out = []
    for node in range(1, nodes + 1):
        for index in range(replicas_per_node):
            gpus = tuple(range(index * tensor_parallel_size, (index + 1) * tensor_parallel_size))
            numa = tuple(
                sorted(
                    {
                        numa_node_of_gpu(g, gpus_per_node=gpus_per_node, sockets=sockets)
                        for g in gpus
                    }
                )
            )
            out.append(Slot(node, index, gpus, numa, base_port + index))
    return tuple(out)


def buffer_gib_per_socket(
    node_slots: tuple[Slot, ...], per_instance_gib: float
) -> dict[int, float]:
    """Pinned buffer each socket holds when every instance binds to its cards' nodes.

    An instance spanning several nodes spreads its buffer evenly over them.
    """
    out: dict[int, float] = {}
    for slot in node_slots:
        share = per_instance_gib / len(slot.numa_nodes)
        for n in slot.numa_nodes:
            out[n] = out.get(n, 0.0) + share
    return out


def topology_check_script(node_slots: tuple[Slot, ...]) -> str:
    """A bash script that prints ``nvidia-smi topo -m`` and checks every card's NUMA node.

    It reads each card's PCI bus id from ``nvidia-smi --query-gpu=pci.bus_id`` and its
    NUMA node from sysfs, and exits 1 naming every card that sits elsewhere than planned.
    """
    expected: dict[int, int] = {}
    for slot in node_slots:
        for gpu in slot.gpu_ids:
            expected[gpu] = slot.numa_nodes[0] if len(slot.numa_nodes) == 1 else -2
    lines = [
        shell.SHEBANG,
        "# Run first on this node: shows the GPU/NIC/CPU topology and checks that every",
        "# card sits on the NUMA node its instance is bound to with numactl.",
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
