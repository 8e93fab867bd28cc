"""Every engine command line of the bundle, fed to that release's own parser.

The parsers come from the released wheels in the engine venv
(``tests/engine_check/engine_venv.py``: PyTorch 2.13.0 CPU, the wheels' files); the
checkers are ``tests/engine_check/vllm_args.py`` (with the connector names and keys of
``connector_keys.py``), ``sglang_args.py``, ``dynamo_args.py`` and
``lmcache_server_args.py``. Every plan of ``tests/engine_bundle.py`` with every shared
tier, both offload settings and every recorded release (Dynamo: the release whose pinned
vLLM is unpacked): the ``serve.sh``/``serve-short.sh`` exec lines of vLLM native,
LMCache and the LMCache server, the command the llm-d modelservice chart starts, every
SGLang server, every Dynamo frontend and worker, every ``lmcache server``. A flag or
value the release refuses fails the test. The Dynamo frontend is also started, with
the discovery backend its script chooses, and must answer without etcd.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from configurator.deployments.services import bundle_files
from sizing.engines import dynamo
from sizing.engines.flags import EngineVersions
from tests.engine_bundle import PLANS, chart_argv, parse_script, tier_variants
from tests.engine_check import engine_venv, packages

pytestmark = pytest.mark.engine_wheels


@pytest.fixture(scope="module", autouse=True)
def _venv() -> None:
    try:
        engine_venv.build()
    except engine_venv.EngineVenvError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def command_lines(engine: str, versions: EngineVersions, program: tuple[str, ...]) -> list[dict]:
    """Every exec line starting with ``program`` the bundle emits for ``engine``."""
    out: list[dict] = []
    for plan_name in sorted(PLANS):
        for shared, offload_decode, tiers in tier_variants():
            for f in bundle_files(
                plan=PLANS[plan_name](), engine=engine, tiers=tiers, versions=versions
            ):
                name = f"{plan_name}/{shared}/{offload_decode}/{f.path}"
                if f.path.endswith(".sh"):
                    argv = parse_script(f.text)[1]
                    if tuple(argv[: len(program)]) == program:
                        out.append({"name": name, "argv": argv})
                elif f.path == "llm-d/modelservice-values.yaml":
                    out.append({"name": name, "argv": chart_argv(yaml.safe_load(f.text))})
    return out


def check(package: str, version: str, module: str, lines: list[dict], tmp_path: Path) -> None:
    label = {"vllm": "vLLM", "sglang": "SGLang"}[package]
    check_with([engine_venv.unpacked(package, version)], module, label, lines, tmp_path / package)


def check_with(
    paths: list[Path], module: str, label: str, lines: list[dict], tmp_path: Path
) -> None:
    """Run ``module`` on ``lines`` with ``paths`` first on the path; every line accepted."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "lines.json"
    path.write_text(json.dumps(lines))
    result = engine_venv.run_with_path(paths, ["-m", module, str(path)])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count(f"accepted by {label}") == len(lines)


def dynamo_paths(version: str) -> list[Path]:
    """Dynamo ``version`` and the vLLM release it pins."""
    return [
        engine_venv.dynamo_unpacked(version),
        engine_venv.unpacked("vllm", engine_venv.DYNAMO[version]),
    ]


@pytest.mark.parametrize("version", engine_venv.recorded_versions("vllm"))
def test_vllm_accepts_every_emitted_command_line(version: str, tmp_path: Path) -> None:
    versions = EngineVersions(vllm=version)
    lines = []
    for engine in ("vllm", "lmcache", "lmcache-server", "llm-d"):
        lines += command_lines(engine, versions, ("vllm", "serve"))
    # 5 plans × 3 shared tiers × 2 offload settings, several instances each.
    assert len(lines) > 200
    assert any(line["name"].endswith("modelservice-values.yaml") for line in lines)
    assert any(line["name"].endswith("serve-short.sh") for line in lines)
    check("vllm", version, "tests.engine_check.vllm_args", lines, tmp_path)


@pytest.mark.parametrize("version", engine_venv.recorded_versions("sglang"))
def test_sglang_accepts_every_emitted_command_line(version: str, tmp_path: Path) -> None:
    lines = command_lines(
        "sglang", EngineVersions(sglang=version), ("python", "-m", "sglang.launch_server")
    )
    assert len(lines) > 30
    check("sglang", version, "tests.engine_check.sglang_args", lines, tmp_path)


@pytest.mark.parametrize("version", sorted(engine_venv.DYNAMO))
def test_dynamo_accepts_every_emitted_command_line(version: str, tmp_path: Path) -> None:
    versions = EngineVersions(dynamo=version)
    lines = command_lines("dynamo", versions, ("python", "-m", "dynamo.vllm"))
    lines += command_lines("dynamo", versions, ("python", "-m", "dynamo.frontend"))
    assert sum(1 for line in lines if "dynamo.frontend" in line["argv"]) > 5
    assert len(lines) > 40
    check_with(dynamo_paths(version), "tests.engine_check.dynamo_args", "Dynamo", lines, tmp_path)


def test_lmcache_server_accepts_every_emitted_command_line(tmp_path: Path) -> None:
    lines = command_lines("lmcache-server", EngineVersions(), ("lmcache", "server"))
    assert len(lines) > 40
    assert any("s3" in " ".join(line["argv"]) for line in lines)
    check_with(
        [packages.unpacked("lmcache")],
        "tests.engine_check.lmcache_server_args",
        "LMCache",
        lines,
        tmp_path,
    )


def offloading(extra: dict) -> list[str]:
    """``vllm serve m`` with an OffloadingConnector of ``extra`` as its extra config."""
    config = {"kv_connector": "OffloadingConnector", "kv_role": "kv_both"}
    config["kv_connector_extra_config"] = extra  # type: ignore[assignment]
    return ["vllm", "serve", "m", "--kv-transfer-config", json.dumps(config)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("version", sorted(engine_venv.DYNAMO))
def test_dynamo_frontend_starts_with_the_scripts_discovery(version: str, tmp_path: Path) -> None:
    """The seed's frontend.sh as written (its exec line, its DYN_FILE_KV), on a free
    port: Dynamo 1.6.1 answers /health and lists no model yet, and never waits for etcd
    (its default backend, which prints "etcd not reachable yet")."""
    files = {
        f.path: f
        for f in bundle_files(
            plan=PLANS["seed"](), engine="dynamo", versions=EngineVersions(dynamo=version)
        )
    }
    env, argv = parse_script(files["node1/dynamo/frontend.sh"].text)
    assert argv[argv.index("--discovery-backend") + 1] == "file"
    assert env["DYN_FILE_KV"] == dynamo.DISCOVERY_DIR  # here: a directory of the test
    port = _free_port()
    argv[argv.index("--http-port") + 1] = str(port)
    path = os.pathsep.join(str(p) for p in dynamo_paths(version))
    log = tmp_path / "frontend.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(engine_venv.VENV / "bin" / "python"), *argv[1:]],
            env={**os.environ, "PYTHONPATH": path, "DYN_FILE_KV": str(tmp_path / "kv")},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline, body = time.monotonic() + 120, None
        while time.monotonic() < deadline and proc.poll() is None and body is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                    body = json.loads(r.read())
            except OSError:
                time.sleep(1)
        assert body == {"object": "list", "data": []}, log.read_text()[-2000:]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "etcd" not in text.lower() and "discovery backend: File" in text


@pytest.mark.parametrize(
    ("paths", "module", "argv", "refused"),
    [
        (
            "dynamo",
            "dynamo_args",
            ["python", "-m", "dynamo.frontend", "--router-mode", "kvv"],
            "kvv",
        ),
        (
            "dynamo",
            "dynamo_args",
            ["python", "-m", "dynamo.frontend", "--discovery-backend", "files"],
            "files",
        ),
        (
            "dynamo",
            "dynamo_args",
            ["python", "-m", "dynamo.vllm", "--model", "m", "--kv-events-confg", "{}"],
            "kv-events-confg",
        ),
        (
            "lmcache",
            "lmcache_server_args",
            [
                "lmcache",
                "server",
                "--l1-size-gb",
                "1",
                "--eviction-policy",
                "LRU",
                "--l2-adapter",
                '{"type":"fs_nativ","base_path":"/x"}',
            ],
            "fs_nativ",
        ),
        ("vllm", "vllm_args", offloading({"spec_name": "TieringOffloadSpec"}), "OffloadSpec"),
        (
            "vllm",
            "vllm_args",
            offloading(
                {
                    "spec_name": "TieringOffloadingSpec",
                    "secondary_tiers": [{"type": "fs", "root_dir": "/x", "rootdir": "/y"}],
                }
            ),
            "rootdir",
        ),
    ],
)
def test_the_new_checkers_refuse_what_the_engine_refuses(
    paths: str, module: str, argv: list[str], refused: str, tmp_path: Path
) -> None:
    """Each checker can fail: Dynamo's choices and flags, an unknown LMCache L2 adapter
    type, a misspelt offloading spec and tier key (vLLM itself takes both until the
    engine starts)."""
    found = {
        "dynamo": lambda: dynamo_paths(sorted(engine_venv.DYNAMO)[-1]),
        "lmcache": lambda: [packages.unpacked("lmcache")],
        "vllm": lambda: [engine_venv.unpacked("vllm", engine_venv.recorded_versions("vllm")[-1])],
    }[paths]()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"name": "bad", "argv": argv}]))
    result = engine_venv.run_with_path(found, ["-m", f"tests.engine_check.{module}", str(path)])
    assert result.returncode == 1 and refused in result.stderr, result.stderr[-2000:]


@pytest.mark.parametrize(
    ("package", "module", "argv", "refused"),
    [
        ("vllm", "vllm_args", ["vllm", "serve", "m", "--kv-offloading-sise", "10"], "sise"),
        ("vllm", "vllm_args", ["vllm", "serve", "m", "--tensor-parallel-size", "two"], "two"),
        (
            "vllm",
            "vllm_args",
            [
                "vllm",
                "serve",
                "m",
                "--kv-transfer-config",
                '{"kv_conector": "OffloadingConnector"}',
            ],
            "kv_conector",
        ),
        (
            "sglang",
            "sglang_args",
            ["python", "-m", "sglang.launch_server", "--model-path", "m", "--hicache-sise", "1"],
            "hicache-sise",
        ),
    ],
)
def test_the_parsers_refuse_what_the_engine_refuses(
    package: str, module: str, argv: list[str], refused: str, tmp_path: Path
) -> None:
    """The check can fail: a misspelt flag, a value of the wrong type, a misspelt key
    of ``--kv-transfer-config`` (vLLM's ``KVTransferConfig`` refuses unknown keys)."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"name": "bad", "argv": argv}]))
    version = engine_venv.recorded_versions(package)[-1]
    result = engine_venv.run_check(package, version, f"tests.engine_check.{module}", [str(path)])
    assert result.returncode == 1 and refused in result.stderr
