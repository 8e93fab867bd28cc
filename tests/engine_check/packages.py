"""The engines' released packages, fetched for the tests that feed them the bundle.

Each entry is a wheel downloaded with ``pip download --no-deps`` into
``.cache/engine-wheels/`` (ignored by git) and unpacked; a test then runs the engine's
own config loader or argument parser from it in a subprocess. Only packages whose
checking module imports on a machine without a GPU and without PyTorch are listed:

- LMCache 0.5.6: ``lmcache.v1.config`` imports without torch ("CLI-only mode").
- vLLM and SGLang: their argument modules import PyTorch, so they run in the engine
  venv instead (``tests/engine_check/engine_venv.py``, PyTorch 2.13.0 CPU).
- LMCache's ``lmcache server`` parser imports torch-backed modules, so it runs in the
  engine venv from this same unpacked wheel (``tests/engine_check/lmcache_server_args.py``).

A download that fails skips the test on a developer's machine and fails it in CI
(``CI=true``), so CI never passes without the engine's own check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "engine-wheels"
WHEELS = {"lmcache": "0.5.6"}
"""Engine package → the released version the bundle targets (``EngineVersions``)."""


def _pip() -> list[str]:
    pip = shutil.which("pip3") or shutil.which("pip")
    return [pip] if pip else [sys.executable, "-m", "pip"]


def unpacked(package: str) -> Path:
    """The unpacked wheel of ``package`` at its pinned version (downloaded once).

    Skips the calling test when the wheel cannot be had, except with ``CI=true``, where
    it fails.
    """
    version = WHEELS[package]
    target = CACHE / f"{package}-{version}"
    if (target / package).is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            *_pip(),
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(CACHE),
            f"{package}=={version}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    wheels = sorted(CACHE.glob(f"{package}-{version}-*.whl"))
    if result.returncode != 0 or not wheels:
        message = f"cannot download {package}=={version}: {result.stderr.strip()[-300:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    partial = CACHE / f".{package}-{version}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    with zipfile.ZipFile(wheels[-1]) as wheel:
        wheel.extractall(partial)
    partial.rename(target)
    return target


def run_engine_check(
    package: str, module: str, args: list[str]
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m <module> <args>`` with the unpacked ``package`` first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(unpacked(package)), str(ROOT)))}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
