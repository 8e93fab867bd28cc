"""The bill of materials of a plan (sizing/bom/lines.py): SKUs, quantities and reasons."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing.bom.lines import bill_of_materials, psu_count
from sizing.bom.shared_storage import StorageRequirement
from sizing.hardware.chassis import (
    BASEBOARD_CHASSIS,
    PCIE_CHASSIS,
    ChassisLimitError,
    check_chassis,
)
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.summary import plan_summary
from tests.factories import plan_request


def _plan(**kw: object) -> object:
    args: dict[str, object] = {
        "model": from_catalog("Qwen/Qwen3-32B-FP8"),
        "context_tokens": 8192,
        "users": 500,
        "new_conversations_per_day": 2000,
    }
    args.update(kw)
    return make_plan(plan_request(**args))  # type: ignore[arg-type]


def test_seed_example_bom() -> None:
    bom = bill_of_materials(_plan())  # type: ignore[arg-type]
    lines = {ln.category: ln for ln in bom.lines}
    # Seed worked example (docs/sizing.md §4): 24 × 48 GB DIMMs, 4 GPUs, 2 sockets.
    assert (lines["dimm"].sku, lines["dimm"].quantity) == ("DIMM-DDR5-48GB", 24)
    assert "537 GB" in lines["dimm"].why_en  # 500 GiB ≈ 537 GB buffer (seed)
    assert (lines["gpu"].sku, lines["gpu"].quantity) == ("GPU-RTX-PRO-6000-SE", 4)
    assert lines["cpu"].quantity == 2  # dual-socket EPYC 9005 platform (hardware.json)
    assert lines["chassis"].quantity == 1
    # 2,000 conversations × 1 GiB = 2.1 TB/day (seed); one 6.4 TB 3-DWPD drive covers it
    # (least raw capacity whose rating covers the writes, sizing/memory/nvme.py).
    assert (lines["nvme"].sku, lines["nvme"].quantity) == ("NVME-MICRON-9550-MAX-6.4", 1)
    assert "2.1 TB/day" in lines["nvme"].why_en
    # TP 1 (seed): no replica spans GPUs, so no NVLink bridge is sold.
    assert "bridge" not in lines
    assert [ln.category for ln in bom.lines][:4] == ["chassis", "cpu", "dimm", "gpu"]


def test_sixteen_bit_cache_takes_64_gb_dimms() -> None:
    # Seed: with the 16-bit cache the tier is 1,000 GiB and the node takes 24 × 64 GB.
    dimm = bill_of_materials(_plan(kv_dtype="auto")).line("dimm")  # type: ignore[arg-type]
    assert dimm is not None and (dimm.sku, dimm.quantity) == ("DIMM-DDR5-64GB", 24)


def test_no_offload_sells_baseline_memory_and_no_nvme() -> None:
    # Seed: with 150 users everything fits; host memory stays at the 768 GB baseline
    # (24 × 32 GB) and no NVMe tier is sold.
    bom = bill_of_materials(_plan(users=150))  # type: ignore[arg-type]
    dimm = bom.line("dimm")
    assert dimm is not None and (dimm.sku, dimm.quantity) == ("DIMM-DDR5-32GB", 24)
    assert bom.line("nvme") is None
    assert "768 GB" in dimm.why_en and "768 GB" in dimm.why_de


def test_tensor_parallel_h200_nvl_gets_four_way_bridges() -> None:
    # Llama 3.3 70B in 16-bit needs TP ≥ 2 on 141 GB cards; H200 NVL takes 2- or 4-way
    # bridges (hardware.json nvlink.type), one bridge per replica's GPU group.
    plan = _plan(
        model=from_catalog("meta-llama/Llama-3.3-70B-Instruct"),
        gpu="h200-nvl",
        users=50,
        new_conversations_per_day=0,
        kv_dtype="auto",
    )
    tp = plan.parallelism.tensor_parallel_size  # type: ignore[attr-defined]
    assert tp >= 2
    bridge = bill_of_materials(plan).line("bridge")  # type: ignore[arg-type]
    assert bridge is not None
    ways = 4 if tp % 4 == 0 else 2
    assert bridge.sku == f"NVLINK-BRIDGE-{ways}WAY"
    assert bridge.quantity == 4 // ways


@pytest.mark.parametrize(
    ("gpus", "tdp", "expected"),
    [
        # 4 × 600 W + 2 × 280 W + 400 W = 3,360 W → 2 supplies of 2,700 W, doubled (N+N).
        (4, 600, 4),
        # 8 × 600 W + 560 W + 400 W = 5,760 W → 3 supplies, doubled.
        (8, 600, 6),
        # 1 × 72 W (L4) + 960 W → 1 supply, doubled.
        (1, 72, 2),
    ],
)
def test_power_supplies_cover_peak_draw_n_plus_n(gpus: int, tdp: int, expected: int) -> None:
    assert psu_count(gpus=gpus, gpu_tdp_w=tdp, sockets=2) == expected


def test_too_many_pcie_gpus_for_one_chassis() -> None:
    plan = _plan(gpus_per_node=12)
    with pytest.raises(ValueError, match="chassis holds at most 8 GPUs per node, got 12"):
        bill_of_materials(plan)  # type: ignore[arg-type]


def test_workstation_edition_does_not_go_into_the_4u_server() -> None:
    # NVIDIA's Workstation Edition datasheet: a 600 W double flow-through desktop cooler;
    # the 4U server takes passive and blower cards (``chassis`` in hardware.json).
    plan = _plan(gpu="rtx-pro-6000-ws", gpus_per_node=4)
    with pytest.raises(ChassisLimitError) as err:
        bill_of_materials(plan)  # type: ignore[arg-type]
    assert err.value.field == "gpu" and err.value.binding == "GPU cooling per chassis"
    assert "rtx-pro-6000-ws" in err.value.message and "flow-through" in err.value.message
    assert "CHS-SP5-4U8G" in err.value.message


@pytest.mark.parametrize("slug", ["rtx-pro-6000-se", "rtx-pro-6000-maxq"])
def test_server_and_max_q_editions_go_into_the_4u_server(slug: str) -> None:
    # Server Edition: passive for rack servers; Max-Q: 300 W blower (NVIDIA pages).
    bom = bill_of_materials(_plan(gpu=slug, gpus_per_node=4))  # type: ignore[arg-type]
    assert bom.line("chassis") is not None and bom.line("chassis").sku == "CHS-SP5-4U8G"  # type: ignore[union-attr]


def test_too_many_baseboard_gpus_for_one_chassis() -> None:
    # An HGX/OAM baseboard carries 8 modules (hardware notes, 8-GPU pattern).
    plan = _plan(gpu="h200-sxm", gpus_per_node=16, users=50, new_conversations_per_day=0)
    with pytest.raises(ChassisLimitError) as err:
        bill_of_materials(plan)  # type: ignore[arg-type]
    assert err.value.binding == "GPU slots per chassis" and err.value.field == "gpus_per_node"


@pytest.mark.parametrize(
    ("slug", "gpus"), [("h100-sxm", 2), ("h200-sxm", 6), ("b200", 4), ("h20", 4)]
)
def test_module_gpus_come_only_in_their_baseboard_counts(slug: str, gpus: int) -> None:
    # hardware.json baseboard_gpus: HGX H100/H200 4 or 8 GPUs, HGX B200 and HGX H20 8.
    plan = _plan(gpu=slug, gpus_per_node=gpus, users=50, new_conversations_per_day=0)
    with pytest.raises(
        ChassisLimitError, match=rf"baseboards of [48, ]+ GPUs only, got {gpus} per node"
    ) as err:
        bill_of_materials(plan)  # type: ignore[arg-type]
    assert err.value.binding == "GPUs per baseboard" and err.value.field == "gpus_per_node"


def test_an_hgx_h20_node_is_built_on_the_baseboard_chassis() -> None:
    # hardware.json: H20 is an SXM5 module on the 8-GPU HGX H20 board (cooling "module").
    bom = bill_of_materials(_plan(gpu="h20", gpus_per_node=8, users=50))  # type: ignore[arg-type]
    assert bom.line("chassis").sku == BASEBOARD_CHASSIS.sku  # type: ignore[union-attr]
    assert bom.line("gpu").quantity == 8  # type: ignore[union-attr]


def test_qa_case_48_dimms_names_the_dimm_slots() -> None:
    # Issue 6 QA: Llama-3.1-8B, 32,768 tokens, 2,000 users, 2 × H200 NVL, 16-bit cache
    # once gave 48 DIMMs for a chassis with 24 slots (ServeTheHome 4U8G-TURIN2 review).
    with pytest.raises(ChassisLimitError, match=r"48 DIMMs per node.*24 DIMM slots") as err:
        check_chassis(PCIE_CHASSIS, gpus=2, dimm_count=48, nvme_drive_count=0)
    assert err.value.binding == "DIMM slots per chassis" and err.value.field == "users"
    # The plan itself now spreads the users over nodes (sizing.layout.cluster), each within its
    # slots; either way no BOM with 48 DIMMs per node is made.
    bom = bill_of_materials(
        _plan(  # type: ignore[arg-type]
            model=from_catalog("meta-llama/Llama-3.1-8B-Instruct"),
            context_tokens=32768,
            users=2000,
            gpu="h200-nvl",
            gpus_per_node=2,
            kv_dtype="auto",
            new_conversations_per_day=0,
        )
    )
    dimms = bom.line("dimm")
    assert bom.nodes > 1 and dimms is not None and dimms.quantity_per_node <= 24


def test_more_nvme_drives_than_bays_names_the_bays() -> None:
    # 4 NVMe bays on the 4U8G-TURIN2 (ServeTheHome review), 8 on the baseboard chassis.
    with pytest.raises(ChassisLimitError, match=r"5 NVMe drives.*4 NVMe bays") as err:
        check_chassis(PCIE_CHASSIS, gpus=4, dimm_count=24, nvme_drive_count=5)
    assert err.value.binding == "NVMe bays per chassis"
    check_chassis(BASEBOARD_CHASSIS, gpus=8, dimm_count=24, nvme_drive_count=5)


@pytest.mark.parametrize(
    "kw",
    [
        {},  # seed example
        {"kv_dtype": "auto"},  # seed, 16-bit cache: 24 × 64 GB
        {"users": 2000},  # a larger CPU tier
        {"new_conversations_per_day": 200_000},  # more writes than four drives are rated for
        {"gpu": "h200-nvl", "gpus_per_node": 8, "users": 4000},
    ],
)
def test_every_bom_fits_its_chassis(kw: dict[str, object]) -> None:
    plan = _plan(**kw)
    bom = bill_of_materials(plan)  # type: ignore[arg-type]
    chassis = PCIE_CHASSIS  # all PCIe cards here
    per_node = {ln.category: ln.quantity_per_node for ln in bom.lines}
    assert per_node["chassis"] == 1
    assert per_node["gpu"] <= chassis.gpu_slots
    assert per_node["dimm"] <= chassis.dimm_slots
    assert per_node.get("nvme", 0) <= chassis.nvme_bays


def test_fifty_thousand_users_buy_or_bring_a_shared_storage_line() -> None:
    # 50,000 users of the seed model on nodes of 24 × 48 GB without an NVMe tier: N nodes
    # whose CPU tiers hold part of the resting conversations, and a shared tier that takes
    # the returns of the rest (sizing/serving/serve.py sells it from 5 % of the returns).
    plan = _plan(users=50_000, max_host_memory_gb=1152, new_conversations_per_day=0)
    s = plan_summary(plan)  # type: ignore[arg-type]
    bom = bill_of_materials(plan)  # type: ignore[arg-type]
    storage = bom.line("storage")
    assert storage is not None and storage.sku == "STO-KV-SHARED-TB"
    # Every user's 1 GiB conversation once: 50,000 × 2^30 B = 53.69 TB, sold in whole TB.
    assert storage.quantity == 54 and storage.quantity_per_node == 0
    # The line names the nodes, the capacity, the network per node and the hashing rule
    # (sizing/bom/shared_storage.py), the figures being the plan's own summary keys.
    nodes, gbps = s["nodes"], s["shared_tier_gbps"]
    assert nodes > 1 and bom.nodes == nodes
    assert f"for {nodes} nodes: 53.7 TB, {gbps:.2f} GB/s per node" in storage.why_en
    assert "PYTHONHASHSEED" in storage.why_en and "sha256" in storage.why_en
    de_gbps = f"{gbps:.2f}".replace(".", ",")
    assert f"für {nodes} Knoten: 53,7 TB, {de_gbps} GB/s je Knoten" in storage.why_de
    assert bom.line("chassis").quantity == nodes  # type: ignore[union-attr]
    assert [ln.category for ln in bom.lines][-1] == "storage"


def test_one_node_plan_has_no_storage_line() -> None:
    # Seed: one node, every user in its CPU tier: no shared tier, no storage line.
    assert bill_of_materials(_plan()).line("storage") is None  # type: ignore[arg-type]


def test_each_node_of_a_cluster_buys_drives_for_its_own_share_of_the_day() -> None:
    # sizing/memory/nvme.py: the router keeps a conversation on its instance, so a node writes
    # only its share of the day. 50,000 users of the seed model need 24 nodes
    # (tests/sizing/test_scale.py); 20,000 new conversations a day → 834 per node.
    plan = _plan(users=50_000, new_conversations_per_day=20_000)
    nodes = plan.parallelism.nodes  # type: ignore[attr-defined]
    nvme = plan.nvme  # type: ignore[attr-defined]
    conversation = plan.conversation_bytes  # type: ignore[attr-defined]
    assert nodes > 1 and nvme.nodes == nodes
    assert nvme.writes_tb_per_day == pytest.approx(-(-20_000 // nodes) * conversation / 1e12)
    assert nvme.total_writes_tb_per_day == pytest.approx(20_000 * conversation / 1e12)
    assert nvme.rated_writes_tb_per_day >= nvme.writes_tb_per_day
    line = bill_of_materials(plan).line("nvme")  # type: ignore[arg-type]
    assert line is not None and line.quantity == nvme.drive_count * nodes
    assert "per node" in line.why_en
    summary = plan_summary(plan)  # type: ignore[arg-type]
    assert summary["nvme_writes_tb_per_day"] == round(nvme.total_writes_tb_per_day, 3)
    assert summary["nvme_writes_tb_per_day_per_node"] == round(nvme.writes_tb_per_day, 3)


ONE_NODE_TIER = StorageRequirement(
    nodes=1,
    capacity_tb=0.5,
    gbps_per_node=1.25,
    read_gbps_per_node=1.25,
    write_gbps_per_node=0.5,
    gbps_total=1.25,
)
"""The review's 0.5 TB NFS/S3 tier on one node with a capped CPU tier (the line's inputs)."""


def test_a_shared_tier_for_one_node_is_worded_in_the_singular_and_in_german() -> None:
    # A one-node plan can take a shared tier when its CPU tier is capped (the review's
    # 0.5 TB NFS/S3 tier on one node); figures here are the line's own inputs.
    one = ONE_NODE_TIER
    assert "shared KV tier (NFS/pNFS or S3) for 1 node: 0.5 TB" in one.why_en()
    assert "gemeinsame KV-Stufe (NFS/pNFS oder S3) für 1 Knoten: 0,5 TB" in one.why_de()
    assert "Tier" not in one.why_de()
    two = replace(one, nodes=2)
    assert "for 2 nodes: 0.5 TB" in two.why_en()


def test_a_shared_tier_that_would_serve_no_reload_is_not_sold() -> None:
    # 50,000 users of the seed model: nodes whose CPU tiers hold every resting
    # conversation (tests/sizing/test_scale.py), so no return would reload from a shared
    # tier: the plan sells none and the BOM has no storage line (sizing/serving/serve.py).
    plan = _plan(users=50_000, new_conversations_per_day=20_000)
    assert plan.parallelism.nodes > 1  # type: ignore[attr-defined]
    assert plan.serving.shared is None  # type: ignore[attr-defined]
    assert bill_of_materials(plan).line("storage") is None  # type: ignore[arg-type]
