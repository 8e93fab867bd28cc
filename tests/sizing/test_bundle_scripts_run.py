"""Every script of the bundle runs to its end with stub programs on ``PATH``, and the
model name reaches each program as exactly one argument whatever characters it has."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from sizing.engines import bundle, deployment
from sizing.engines.shared_tier import TierOptions
from tests.engine_bundle import PLANS, SHARED, parse_script, run_with_stubs

ENGINE_PROGRAMS = ("vllm", "python", "lmcache")
"""What the engine scripts exec: ``vllm serve``, ``python -m sglang.launch_server`` /
``dynamo.vllm`` / ``dynamo.frontend``, ``lmcache server``."""


def numactl_options(text: str) -> list[str]:
    """The ``--cpunodebind``/``--membind`` options of a script's ``exec numactl`` line."""
    exec_line = next(
        line for line in text.replace("\\\n", " ").splitlines() if line.startswith("exec ")
    )
    argv = shlex.split(exec_line)[1:]
    assert argv[0] == "numactl"
    return [a for a in argv[1:3] if a.startswith(("--cpunodebind=", "--membind="))]


HOSTILE_MODEL = 'org/it\'s a "model" $(touch pwned) `touch pwned2`; echo x | cat & ~ *'
"""A model name with every shell metacharacter; no repo id looks like this, but a
private model's name is free text."""


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("shared", SHARED)
def test_every_script_runs_with_stubs(plan_name: str, shared: str, tmp_path: Path) -> None:
    d = deployment.from_plan(PLANS[plan_name](), tiers=TierOptions(shared=shared))
    d = replace(d, model_id=HOSTILE_MODEL)
    files = [f for r in bundle.render(d, bundle.ENGINES) for f in r.files]
    scripts = [f for f in files if f.path.endswith(".sh")]
    assert scripts
    for f in scripts:
        node = int(f.path.split("/")[0][4:]) if f.path.startswith("node") else 1
        numa = {
            g: n
            for s in d.node_slots(node)
            for g, n in zip(
                s.gpu_ids, s.gpu_numa or (s.numa_nodes[0],) * len(s.gpu_ids), strict=True
            )
        }
        result, calls = run_with_stubs(
            f.text,
            tmp_path,
            env={"VLLM_API_KEY": "k", "NVME_DEVICE": "/dev/nvme9n1"},
            numa=numa,
        )
        assert result.returncode == 0, f"{f.path}: {result.stderr}"
        assert calls, f.path
        _env, program = parse_script(f.text)
        program = ["k" if a == "$VLLM_API_KEY" else a for a in program]  # SGLang's --api-key
        if f.path.endswith(("/serve.sh", "/lmcache-server.sh", "/frontend.sh")):
            # The engine itself got the exec line, bound by numactl where it is.
            assert calls[-1] == program and program[0] in ENGINE_PROGRAMS, f.path
            if f.path.endswith("/serve.sh"):
                assert HOSTILE_MODEL in program, f.path
                assert calls[-2][:3] == ["numactl", *numactl_options(f.text)], f.path
                assert calls[-2][3:] == program, f.path
        if f.path.endswith("/check-topology.sh"):
            assert ["nvidia-smi", "topo", "-m"] in calls, f.path
        assert not list(tmp_path.glob("pwned*")), f.path
