"""Every LMCache YAML of the bundle, fed to LMCache's own config loader (0.5.6 wheel).

The command lines of vLLM, SGLang, Dynamo and the LMCache server go to their own parsers
in ``tests/web/test_engine_argv_parsers.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from configurator.deployments.services import bundle_files
from tests.engine_bundle import PLANS, tier_variants
from tests.engine_check.packages import run_engine_check

pytestmark = pytest.mark.engine_wheels


def test_lmcache_accepts_every_emitted_yaml(tmp_path: Path) -> None:
    paths = []
    for plan_name in sorted(PLANS):
        for shared, offload_decode, tiers in tier_variants():
            for f in bundle_files(plan=PLANS[plan_name](), engine="lmcache", tiers=tiers):
                if f.path.endswith("lmcache.yaml"):
                    path = tmp_path / f"{plan_name}-{shared}-{offload_decode}-{len(paths)}.yaml"
                    path.write_text(f.text)
                    paths.append(str(path))
    assert len(paths) > 20
    result = run_engine_check("lmcache", "tests.engine_check.lmcache_config", paths)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("accepted by LMCache") == len(paths)


def test_lmcache_refuses_a_key_it_does_not_know(tmp_path: Path) -> None:
    """The check can fail: a misspelt key (``max_local_cpu_gib``) is refused."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("chunk_size: 256\nlocal_cpu: true\nmax_local_cpu_gib: 40\n")
    result = run_engine_check("lmcache", "tests.engine_check.lmcache_config", [str(bad)])
    assert result.returncode == 1 and "max_local_cpu_gib" in result.stderr


@pytest.mark.parametrize("value", ["-1"])
def test_lmcache_validate_refuses_a_bad_value(value: str, tmp_path: Path) -> None:
    """LMCache's ``validate()`` runs too: ``min_retrieve_tokens`` must be >= 0."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"chunk_size: 256\nmin_retrieve_tokens: {value}\n")
    result = run_engine_check("lmcache", "tests.engine_check.lmcache_config", [str(bad)])
    assert result.returncode != 0 and "min_retrieve_tokens" in result.stderr
