"""CPU time of ``manage.py size`` for the seed job against NVIDIA AIConfigurator's
``cli estimate`` for the same model, context and GPU, measured in the same run.

Target: ``size`` takes at least 8 times less CPU. Both run as fresh processes with
``HF_HUB_OFFLINE`` set (AIConfigurator ships the Qwen3-32B-FP8 config and the RTX PRO
6000 Server perf data; our catalog has the model), each after one unmeasured run that
writes its bytecode caches, as an installed environment has them; the figure is the
median of the children's user + system CPU time (``os.wait4``), which a busy shared
machine does not inflate the way wall time does.

The peer is installed from PyPI into its own virtual environment, outside the project's
(``AICONFIGURATOR_VENV``, default ``benchmarks/.peer/aiconfigurator``, not committed),
on the first run. Its job: ``--isl 8192 --osl 512 --tp-size 1 --batch-size 1
--kvcache-quant-mode fp8`` on ``rtx_pro_6000_server`` with its default backend
(TensorRT-LLM; its vLLM data for that system cannot anchor the 8,192-token GEMM and the
command fails).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.run import Result

ROOT = Path(__file__).resolve().parent.parent
PEER_VERSION = "0.12.0"
RUNS = 3
SEED_ARGS = [
    "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500",
    "--gpu", "rtx-pro-6000-se", "--gpus-per-node", "4", "--kv-dtype", "fp8",
    "--new-conversations-per-day", "2000", "--format", "json",
]  # fmt: skip
PEER_ARGS = [
    "cli", "estimate", "--model-path", "Qwen/Qwen3-32B-FP8", "--system", "rtx_pro_6000_server",
    "--isl", "8192", "--osl", "512", "--tp-size", "1", "--batch-size", "1",
    "--kvcache-quant-mode", "fp8",
]  # fmt: skip


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def _cpu_s(argv: list[str], cwd: Path) -> float:
    """User + system CPU seconds of one run of ``argv`` (must exit 0)."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {err.decode()[-500:]}")
    return usage.ru_utime + usage.ru_stime


def _median_cpu_s(argv: list[str], cwd: Path) -> float:
    _cpu_s(argv, cwd)  # writes the bytecode caches; not measured
    return statistics.median(_cpu_s(argv, cwd) for _ in range(RUNS))


def _peer() -> Path | None:
    """The peer's ``aiconfigurator`` script, installed on first use; ``None`` if it cannot be."""
    venv = Path(os.environ.get("AICONFIGURATOR_VENV") or ROOT / "benchmarks/.peer/aiconfigurator")
    script = venv / "bin" / "aiconfigurator"
    if script.exists():
        return script
    uv = shutil.which("uv") or str(ROOT / ".tools/bin/uv")
    try:
        subprocess.run([uv, "venv", "--python", sys.executable, str(venv)], check=True)
        subprocess.run(
            [uv, "pip", "install", "--python", str(venv / "bin/python"),
             f"aiconfigurator=={PEER_VERSION}"],
            check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"cannot install aiconfigurator {PEER_VERSION}: {exc}", file=sys.stderr)
        return None
    return script


def run() -> list[Result]:
    ours = _median_cpu_s([sys.executable, "manage.py", "size", *SEED_ARGS], ROOT)
    results = [
        Result("cli", "`size` for the seed job, CPU per run (median)", f"{ours:.2f} s", "-", True)
    ]
    peer = _peer()
    if peer is None:
        results.append(
            Result("cli", "AIConfigurator `cli estimate`: could not be installed", "-", "-", False)
        )
        return results
    theirs = _median_cpu_s([str(peer), *PEER_ARGS], ROOT)
    ratio = theirs / ours
    results += [
        Result(
            "cli",
            f"AIConfigurator {PEER_VERSION} `cli estimate`, same job, CPU per run (median)",
            f"{theirs:.2f} s",
            "-",
            True,
        ),
        Result("cli", "CPU ratio, AIConfigurator / `size`", f"{ratio:.1f}×", ">= 8×", ratio >= 8),
    ]
    return results
