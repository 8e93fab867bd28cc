"""Every vLLM and SGLang command line of the bundle, fed to that release's own parser.

The parsers come from the released wheels in the engine venv
(``tests/engine_check/engine_venv.py``: PyTorch 2.13.0 CPU, the wheels' Python files);
the checkers are ``tests/engine_check/vllm_args.py`` and ``sglang_args.py``. Every
plan of ``tests/engine_bundle.py`` with every shared tier, both offload settings and
every recorded release: the ``serve.sh``/``serve-short.sh`` exec lines of vLLM native,
LMCache and the LMCache server, the command the llm-d modelservice chart starts, and
every SGLang server. A flag or value the release refuses fails the test.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from configurator.deployments.services import bundle_files
from sizing.engines.flags import EngineVersions
from tests.engine_bundle import PLANS, chart_argv, parse_script, tier_variants
from tests.engine_check import engine_venv


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
    path = tmp_path / f"{package}-{version}.json"
    path.write_text(json.dumps(lines))
    result = engine_venv.run_check(package, version, module, [str(path)])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count(f"accepted by {'vLLM' if package == 'vllm' else 'SGLang'}") == len(
        lines
    )


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
