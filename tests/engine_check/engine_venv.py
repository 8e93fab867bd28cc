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

- Dynamo :data:`DYNAMO`: ``pip download --no-deps`` of ``ai-dynamo`` (its Python
  files, 4 MB) and ``ai-dynamo-runtime`` (the Rust runtime ``dynamo/_core.abi3.so`` the
  argument groups import, 75 MB), unpacked together with their compiled extension into
  ``.cache/engine-wheels/dynamo-<version>/``. The worker's parser adds the flags of the
  vLLM release Dynamo pins (``vllm==0.31.0`` for 1.6.1, its METADATA), which is one of
  the unpacked vLLM wheels; Dynamo 1.5.1 pins vLLM 0.28.0, which is not, so 1.5.1's
  lines are checked against the recorded flag lists only.
- LMCache's ``lmcache server`` parser runs from the LMCache wheel that
  ``tests/engine_check/packages.py`` unpacks (with its ``lmcache_native`` extension);
  importing it needs numba, llvmlite, sortedcontainers and cryptography, and its ``fs``
  and ``s3`` L2 adapters register only when aiofiles and awscrt import (LMCache's own
  requirements), all pinned in ``engine-requirements.txt`` too.

Downloads: PyTorch CPU comes from this machine; the vLLM, SGLang, Dynamo and LMCache
wheels and the pinned packages are about 0.65 GB, of which Dynamo (79 MB) and what the
LMCache server parser imports (70 MB, llvmlite the most) are 0.15 GB; ``.engine-venv``
and ``.cache/engine-wheels`` take about 3.4 GB unpacked.

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
DYNAMO = {"1.6.1": "0.31.0"}
"""Dynamo release whose parsers the tests run → the vLLM release it pins."""
DYNAMO_WHEELS = ("ai-dynamo", "ai-dynamo-runtime")
"""The two wheels one Dynamo release is installed from (both pinned to it)."""


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
    text += "".join(f"dynamo{v}" for v in DYNAMO)
    return hashlib.sha256(text.encode()).hexdigest()


def _run(argv: list[str], step: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip()[-600:]
        raise EngineVenvError(f"{step} failed: {tail}")


def _wheel(package: str, version: str) -> Path:
    """The downloaded wheel of ``package`` ``version`` (``pip download --no-deps``)."""
    stem = package.replace("-", "_")
    wheels = sorted(WHEELS.glob(f"{stem}-{version}-*.whl"))
    if not wheels:
        WHEELS.mkdir(parents=True, exist_ok=True)
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
        wheels = sorted(WHEELS.glob(f"{stem}-{version}-*.whl"))
    if not wheels:
        raise EngineVenvError(f"pip download {package}=={version} left no wheel")
    return wheels[-1]


def _unpack(target: Path, wheels: list[tuple[str, str]], *, keep_so: bool) -> Path:
    """Unpack ``wheels`` ((package, version) pairs) together into ``target``, with or
    without their compiled extensions; each wheel is deleted once unpacked."""
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    for package, version in wheels:
        path = _wheel(package, version)
        with zipfile.ZipFile(path) as wheel:
            names = [n for n in wheel.namelist() if keep_so or not n.endswith(".so")]
            wheel.extractall(partial, names)
        path.unlink()  # the unpacked files are all the checks read
    partial.rename(target)
    return target


def unpacked(package: str, version: str) -> Path:
    """The unpacked wheel of ``package`` ``version`` (downloaded once, no ``*.so``)."""
    target = WHEELS / f"{package}-{version}"
    if (target / package).is_dir():
        return target
    return _unpack(target, [(package, version)], keep_so=False)


def dynamo_unpacked(version: str) -> Path:
    """Dynamo ``version``'s two wheels unpacked together, with the runtime's extension."""
    target = WHEELS / f"dynamo-{version}"
    if (target / "dynamo" / "frontend").is_dir() and (target / "dynamo" / "runtime").is_dir():
        return target
    return _unpack(target, [(p, version) for p in DYNAMO_WHEELS], keep_so=True)


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
    for version in DYNAMO:
        dynamo_unpacked(version)
    return _python()


def run_check(
    package: str, version: str, module: str, args: list[str]
) -> subprocess.CompletedProcess[str]:
    """``<engine venv python> -m <module> <args>`` with ``package`` ``version`` first on
    the path (CPU platform for vLLM)."""
    return run_with_path([unpacked(package, version)], ["-m", module, *args])


def run_with_path(
    paths: list[Path], args: list[str], *, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """``<engine venv python> <args>`` with ``paths`` (then the project) on
    ``PYTHONPATH``, vLLM on its CPU platform."""
    path = os.pathsep.join((*(str(p) for p in paths), str(ROOT)))
    env = {**os.environ, "PYTHONPATH": path, "VLLM_TARGET_DEVICE": "cpu"}
    return subprocess.run(
        [str(_python()), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


if __name__ == "__main__":
    try:
        print(f"engine venv ready: {build()}")
    except EngineVenvError as exc:
        print(f"engine venv: {exc}", file=sys.stderr)
        sys.exit(1)
