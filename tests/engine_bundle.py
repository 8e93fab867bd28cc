"""Reading emitted bundle files back the way an operator's shell would.

Shared by the engine tests: plans from the offline catalog, a script parser
(exports and the ``exec`` line, numactl prefix removed) and the recorded flag lists
read straight from ``sizing/data/engine_flags.json``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from sizing.engines import bundle, deployment
from sizing.engines.deployment import BundleFile, Deployment
from sizing.engines.shared_tier import TierOptions
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, make_plan
from sizing.traffic.profile import Traffic
from tests.factories import plan_request

ROOT = Path(__file__).resolve().parent.parent
FLAGS: dict[str, Any] = json.loads((ROOT / "sizing/data/engine_flags.json").read_text())


def seed_plan(new_conversations_per_day: int = 2000) -> Plan:
    """The seed example (Qwen3-32B-FP8, 8,192 tokens, 500 users, 4 × RTX PRO 6000)."""
    return make_plan(
        plan_request(
            model=from_catalog("Qwen/Qwen3-32B-FP8"),
            context_tokens=8192,
            users=500,
            new_conversations_per_day=new_conversations_per_day,
        )
    )


def tp2_plan() -> Plan:
    """Llama-3.3-70B, 16-bit cache, 8 GPUs: TP 2 × 4 instances (plan of
    sizing.plan.layout_choice)."""
    return make_plan(
        plan_request(
            model=from_catalog("meta-llama/Llama-3.3-70B-Instruct"),
            context_tokens=32768,
            users=300,
            gpus_per_node=8,
            kv_dtype="auto",
            new_conversations_per_day=1000,
            # A fifth of the users in the busiest hour: one node carries their load.
            traffic=Traffic(busy_hour_active_share=0.2),
        )
    )


def pp_plan() -> Plan:
    """DeepSeek-V3 with an FP8 cache on 8 × H100 SXM per node: the weights need two
    nodes, TP 8 × PP 2 (plan of sizing.plan.layout_choice; checked in
    tests/sizing/test_engines_parallel.py)."""
    return make_plan(
        plan_request(
            model=from_catalog("deepseek-ai/DeepSeek-V3"),
            context_tokens=32768,
            users=200,
            gpu="h100-sxm",
            gpus_per_node=8,
            kv_dtype="fp8",
            new_conversations_per_day=1000,
        )
    )


def ep_plan() -> Plan:
    """Qwen3-30B-A3B with expert parallel on 4 GPUs: TP 1, 4 data-parallel ranks, EP 4
    (plan of sizing.plan.layout_choice; checked in tests/sizing/test_engines_parallel.py)."""
    return make_plan(
        plan_request(
            model=from_catalog("Qwen/Qwen3-30B-A3B"),
            context_tokens=32768,
            users=400,
            gpus_per_node=4,
            kv_dtype="fp8",
            expert_parallel=True,
            new_conversations_per_day=1000,
        )
    )


PLANS = {
    "seed": seed_plan,
    "seed-cpu-only": lambda: seed_plan(0),
    "llama70b-tp2": tp2_plan,
    "deepseek-v3-pp2": pp_plan,
    "qwen3-moe-ep4": ep_plan,
}
SHARED = ("none", "nfs", "s3")


def files_of(plan: Plan, engine: str, shared: str = "none") -> tuple[Deployment, list[BundleFile]]:
    """The deployment and every file the bundle emits for ``engine``."""
    d = deployment.from_plan(plan, tiers=TierOptions(shared=shared))
    rendered = bundle.render(d, bundle.engines_for(engine))
    return d, [f for r in rendered for f in r.files]


def notes_of(plan: Plan, engine: str, shared: str = "none") -> list[str]:
    d = deployment.from_plan(plan, tiers=TierOptions(shared=shared))
    return [n for r in bundle.render(d, bundle.engines_for(engine)) for n in r.notes]


def parse_script(text: str) -> tuple[dict[str, str], list[str]]:
    """``(exported variables, exec argv without the numactl prefix)`` of a script; for
    the router script, ``vllm-router`` and the arguments the container gets."""
    env: dict[str, str] = {}
    argv: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export ") :].partition("=")
            env[name] = shlex.split(value)[0]
        elif line.startswith("exec "):
            argv = shlex.split(line[len("exec ") :])
        elif line.startswith("docker run "):
            # The router container: the router's own arguments follow the image.
            argv = shlex.split(line)
            argv = ["vllm-router", *argv[argv.index("$ROUTER_IMAGE") + 1 :]]
    if argv and argv[0] == "numactl":
        argv = argv[1:]
        while argv and argv[0].startswith(("--cpunodebind", "--membind")):
            argv = argv[1:]
    return env, argv


def values(argv: list[str], flag: str) -> list[str]:
    """Every value after a list-valued ``flag`` (``--numa-bind-nodes 0 0 1 1``)."""
    if flag not in argv:
        return []
    out = []
    for arg in argv[argv.index(flag) + 1 :]:
        if arg.startswith("--"):
            break
        out.append(arg)
    return out


def option(argv: list[str], flag: str, default: str | None = None) -> str | None:
    """The value after ``flag`` (the last one if repeated), else ``default``."""
    value = default
    for i, arg in enumerate(argv[:-1]):
        if arg == flag:
            value = argv[i + 1]
    return value


def options(argv: list[str], flag: str) -> list[str]:
    """Every value given to a repeatable ``flag``."""
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == flag]


def scripts(files: list[BundleFile], name: str) -> list[BundleFile]:
    return [f for f in files if f.path.endswith("/" + name)]


STUB_PROGRAMS = (
    "vllm",
    "python",
    "lmcache",
    "numactl",
    "docker",
    "nvidia-smi",
    "mount",
    "findmnt",
    "mkdir",
    "aws",
    "find",
    "cat",
    "curl",
    "jq",
    "ls",
)
"""Programs the bundle's scripts start; each is replaced by a recorder on ``PATH``
(``numactl`` records its options, then runs the program after them, a recorder too)."""

_RECORDER = """#!/bin/bash
# Records its name and arguments, NUL-separated, one file per call.
f="$STUB_LOG/$(date +%s%N)-$$-$RANDOM"
printf '%s\\0' "$(basename "$0")" "$@" > "$f"
case "$(basename "$0")" in
  numactl) while [ "${1#--}" != "$1" ]; do shift; done; exec "$@" ;;
  nvidia-smi) [ "${1:-}" = topo ] || printf '00000000:%02X:00.0\\n' "${!#}" ;;
  cat) b="${1#/sys/bus/pci/devices/}"; cat_real="$STUB_NUMA/${b%%/*}"; /bin/cat "$cat_real" ;;
esac
"""


def run_with_stubs(
    text: str,
    tmp_path: Path,
    *,
    env: dict[str, str] | None = None,
    numa: dict[int, int] | None = None,
) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    """Run a bundle script with every program of :data:`STUB_PROGRAMS` replaced by a
    recorder; returns the result and each recorded call (program name first) in order.

    ``numa`` maps a GPU index to the NUMA node the stubbed ``/sys`` reports for it.
    """
    bin_dir, log, numa_dir = tmp_path / "bin", tmp_path / "log", tmp_path / "numa"
    for folder in (bin_dir, log, numa_dir):
        folder.mkdir(exist_ok=True)
    for old in log.iterdir():
        old.unlink()
    for name in STUB_PROGRAMS:
        stub = bin_dir / name
        stub.write_text(_RECORDER)
        stub.chmod(0o755)
    for gpu, node in (numa or {}).items():
        (numa_dir / f"0000:{gpu:02x}:00.0").write_text(f"{node}\n")
    script = tmp_path / "script.sh"
    script.write_text(text)
    run_env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "STUB_LOG": str(log),
        "STUB_NUMA": str(numa_dir),
        **(env or {}),
    }
    result = subprocess.run(
        ["bash", str(script)], env=run_env, capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    calls = [
        p.read_bytes().decode().split("\0")[:-1]
        for p in sorted(log.iterdir(), key=lambda p: tuple(int(x) for x in p.name.split("-")))
    ]
    return result, calls


def chart_argv(ms: dict[str, Any]) -> list[str]:
    """The command the modelservice chart starts for a decode container
    (``templates/_helpers.tpl`` ``vllmServeModelCommand``, routing proxy off)."""
    [container] = ms["decode"]["containers"]
    assert container["modelCommand"] == "vllmServe"
    argv = ["vllm", "serve", ms["modelArtifacts"]["name"]]
    argv += ["--port", str(ms["routing"]["servicePort"])]
    tp = ms["decode"]["parallelism"]["tensor"]
    if tp > 1:
        argv += ["--tensor-parallel-size", str(tp)]
    argv += ["--served-model-name", ms["modelArtifacts"]["name"]]
    return argv + container["args"]


def tier_variants() -> list[tuple[str, bool, TierOptions]]:
    """Every shared tier with both offload settings; the S3 endpoint once plain http
    with a port, once host:port with TLS; the NFS mount once as pNFS over RDMA."""
    return [
        (
            shared,
            offload_decode,
            TierOptions(
                shared=shared,
                s3_endpoint="http://sg.example.net:8082"
                if offload_decode
                else "sg.example.net:10443",
                nfs_mount_kind="pnfs-rdma" if offload_decode else "nfs",
                offload_decode=offload_decode,
            ),
        )
        for shared in SHARED
        for offload_decode in (False, True)
    ]
