"""The engine venv: vLLM's and SGLang's own argument parsers, importable without a GPU.

``python -m tests.engine_check.engine_venv`` (run by ``.ci/run``; the tests call
:func:`engine_python` too) builds ``.engine-venv/`` (ignored by git) beside ``.venv``:

- ``pip install torch==2.13.0``: this machine keeps a CPU build of that release on
  disk, which pip takes (uv does not look there); any other torch from PyPI is the
  CUDA build of several GB. Then the pure-Python packages that importing the argument
  modules needs, pinned in ``engine-requirements.txt`` beside this file (found by
  importing them until nothing was missing; SGLang's ``sglang/srt/utils/common.py``
  imports triton), installed without resolving dependencies again.
- ``pip download --no-deps`` of the vLLM and SGLang wheels of every release recorded in
  ``sizing/data/engine_flags.json``, unpacked without their compiled extensions
  (``*.so``) into ``.cache/engine-wheels/<package>-<version>/``: the argument modules
  are pure Python. vLLM runs with ``VLLM_TARGET_DEVICE=cpu`` so that its device config
  does not look for a GPU (``vllm/platforms/__init__.py``, ``cpu_platform_plugin``).

Checks run as ``<venv python> -m tests.engine_check.<checker>`` with the unpacked wheel
first on ``PYTHONPATH``. When the venv cannot be built, a test skips on a developer's
machine and fails with ``CI=true``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".engine-venv"
WHEELS = ROOT / ".cache" / "engine-wheels"
REQUIREMENTS = Path(__file__).with_name("engine-requirements.txt")
TORCH = "torch==2.13.0"
PACKAGES = ("vllm", "sglang")
"""Engines whose released argument parsers the tests run."""


class EngineVenvError(RuntimeError):
    """The engine venv or a wheel could not be made (the message says which step)."""


def recorded_versions(package: str) -> tuple[str, ...]:
    """The releases of ``package`` that ``sizing/data/engine_flags.json`` records."""
    data = json.loads((ROOT / "sizing/data/engine_flags.json").read_text())
    return tuple(sorted(data[package]))


def _python() -> Path:
    return VENV / "bin" / "python"


def _stamp() -> str:
    text = REQUIREMENTS.read_text() + TORCH
    text += "".join(f"{p}{recorded_versions(p)}" for p in PACKAGES)
    return hashlib.sha256(text.encode()).hexdigest()


def _run(argv: list[str], step: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip()[-600:]
        raise EngineVenvError(f"{step} failed: {tail}")


def unpacked(package: str, version: str) -> Path:
    """The unpacked wheel of ``package`` ``version`` (downloaded once, no ``*.so``)."""
    target = WHEELS / f"{package}-{version}"
    if (target / package).is_dir():
        return target
    WHEELS.mkdir(parents=True, exist_ok=True)
    wheels = sorted(WHEELS.glob(f"{package}-{version}-*.whl"))
    if not wheels:
        _run(
            [
                str(_python()),
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(WHEELS),
                f"{package}=={version}",
            ],
            f"pip download {package}=={version}",
        )
        wheels = sorted(WHEELS.glob(f"{package}-{version}-*.whl"))
    if not wheels:
        raise EngineVenvError(f"pip download {package}=={version} left no wheel")
    partial = WHEELS / f".{package}-{version}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    with zipfile.ZipFile(wheels[-1]) as wheel:
        wheel.extractall(partial, [n for n in wheel.namelist() if not n.endswith(".so")])
    partial.rename(target)
    wheels[-1].unlink()  # the unpacked Python files are all the checks read
    return target


def build() -> Path:
    """Build the venv and unpack every recorded vLLM and SGLang release; returns the
    venv's Python. Does nothing when the stamp of the last build matches.

    Raises:
        EngineVenvError: naming the step that failed.
    """
    stamp = VENV / ".stamp"
    if not (stamp.is_file() and stamp.read_text() == _stamp() and _python().is_file()):
        shutil.rmtree(VENV, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(VENV)], "python -m venv .engine-venv")
        pip = [str(_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        _run([*pip, TORCH], f"pip install {TORCH}")
        # The list is complete (pip freeze of a venv where the imports succeed), so no
        # dependency is resolved again (torch's own are in it).
        _run(
            [*pip, "--no-deps", "-r", str(REQUIREMENTS)],
            "pip install -r engine-requirements.txt",
        )
        stamp.write_text(_stamp())
    for package in PACKAGES:
        for version in recorded_versions(package):
            unpacked(package, version)
    return _python()


def run_check(
    package: str, version: str, module: str, args: list[str]
) -> subprocess.CompletedProcess[str]:
    """``<engine venv python> -m <module> <args>`` with ``package`` ``version`` first on
    the path (CPU platform for vLLM)."""
    path = os.pathsep.join((str(unpacked(package, version)), str(ROOT)))
    env = {**os.environ, "PYTHONPATH": path, "VLLM_TARGET_DEVICE": "cpu"}
    return subprocess.run(
        [str(_python()), "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=ROOT,
    )


if __name__ == "__main__":
    try:
        print(f"engine venv ready: {build()}")
    except EngineVenvError as exc:
        print(f"engine venv: {exc}", file=sys.stderr)
        sys.exit(1)
