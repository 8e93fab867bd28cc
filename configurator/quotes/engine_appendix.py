"""The quote's engine appendix, built by the same code as the deployment bundle.

For each alternative the appendix shows the ``vllm serve`` command of the first engine
instance, exactly as its ``serve.sh`` in the bundle starts it (``numactl``, port, flags),
with the bundle's default tier locations (``sizing.engines.shared_tier.
TierOptions``): ``sizing.engines.deployment.from_plan`` gives the instances and tiers,
``sizing.engines.vllm`` the arguments and the ``--kv-transfer-config`` (with
``TieringOffloadingSpec`` and an ``fs`` tier when the plan has an NVMe tier), and the
short ``--kv-offloading-size`` form only where the bundle emits it (CPU tier only).
The default locations name no shared tier: a plan that needs one is told so, as the
bundle's README tells it (its endpoint is set when the bundle is built).
"""

from __future__ import annotations

import shlex
from typing import Any

from configurator.planning.services import plan_stored
from sizing.engines import deployment, shell, vllm
from sizing.errors import SizingError
from sizing.memory import vllm_buffer
from sizing.plan.orchestrator import Plan
from sizing.units import GIB


def engine_appendix(inputs: dict[str, Any]) -> dict[str, Any] | None:
    """:func:`engine_appendix_of` the plan of stored ``inputs``
    (:func:`~configurator.planning.services.plan_stored`); ``None`` when they cannot be
    sized."""
    try:
        plan = plan_stored(inputs)
    except (SizingError, ValueError):
        return None
    return engine_appendix_of(plan)


def engine_appendix_of(plan: Plan) -> dict[str, Any] | None:
    """The vLLM launch of ``plan``'s first engine instance as JSON-safe data: the exec
    line of that instance's ``serve.sh`` in the bundle (``numactl`` binding, port and
    flags from the same slot, ``sizing.engines.placement``).

    Returns ``None`` when the bundle has no launch for the layout. Keys: ``command``
    (the shell command, one option per line), ``short_command`` (the short form or
    ``None``), ``config`` (the ``--kv-transfer-config`` object or ``None`` without a CPU
    tier), ``env`` (the script's exported variables, ``export NAME=value`` lines as serve.sh
    writes them), ``script``
    (its path in the bundle), ``ports`` (the first node's instance ports, the router's
    backends), ``instances``, ``cpu_gib_per_instance``, ``cpu_bytes_per_instance``,
    ``tier_dirs`` (the ``fs`` tiers' directories) and ``shared_configured`` (whether the
    command uses a shared NFS or S3 tier).
    """
    try:
        d = deployment.from_plan(plan)
    except (SizingError, ValueError):
        return None
    if not d.launch_supported or not d.slots:
        return None
    slot = d.slots[0]
    common = {
        "env": "\n".join(
            f"export {k}={shlex.quote(v)}" for k, v in vllm.engine_env(d, slot).items()
        ),
        "script": f"node{slot.node}/vllm/{slot.name}/serve.sh",
        "ports": [s.port for s in d.heads if s.node == slot.node],
        "instances": len(d.heads),
        "shared_configured": d.shared != "none",
    }
    buffer = vllm_buffer.offload(d.vllm_native_bytes / GIB)
    if buffer is None:
        return {
            **common,
            "command": shell.command([*slot.numactl, *vllm.serve_argv(d, slot)]),
            "short_command": None,
            "config": None,
            "cpu_gib_per_instance": 0,
            "cpu_bytes_per_instance": 0,
            "tier_dirs": [],
        }
    config = vllm.kv_transfer_config(d, buffer)
    tiers = vllm.secondary_tiers(d)
    short = None
    if not tiers:
        short_argv = [
            *vllm.serve_argv(d, slot),
            "--kv-offloading-size",
            str(buffer.kv_offloading_size_gib),
        ]
        short = shell.command([*slot.numactl, *short_argv])
    return {
        **common,
        "command": shell.command([*slot.numactl, *vllm.serve_argv(d, slot, config)]),
        "short_command": short,
        "config": config,
        "cpu_gib_per_instance": buffer.kv_offloading_size_gib,
        "cpu_bytes_per_instance": buffer.cpu_bytes_to_use,
        "tier_dirs": [t["root_dir"] for t in tiers if t["type"] == "fs"],
    }
