"""llm-d Helm values read back: chart keys, the vLLM command the chart starts, the tier.

Expected values come from the charts' own files, recorded with their paths and releases
in ``sizing/data/llmd_charts.json`` (llm-d-modelservice v0.4.12, inferencepool v1.4.0),
from vLLM's recorded flag list (``sizing/data/engine_flags.json``) and from the plan.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from sizing.engines import llmd
from sizing.units import GIB
from tests.engine_bundle import FLAGS, PLANS, ROOT, SHARED, chart_argv, files_of, notes_of

CHARTS: dict[str, Any] = json.loads((ROOT / "sizing/data/llmd_charts.json").read_text())
MS = CHARTS["llm-d-modelservice"]["v0.4.12"]
POOL = CHARTS["inferencepool"]["v1.4.0"]
# Keys whose contents are Kubernetes objects or free data (labels, env items, resources).
LEAVES = ("labels", "matchLabels", "env", "limits", "requests", "pluginsCustomConfig")
LEAVES += ("volumeMounts", "volumes")


def key_paths(values: Any, prefix: str = "") -> set[str]:
    """Dotted paths of a values document (``decode.containers[].args``)."""
    out: set[str] = set()
    for key, value in values.items():
        path = f"{prefix}.{key}" if prefix else key
        if path.endswith(LEAVES):
            out.add(path)
        elif isinstance(value, dict) and value:
            out |= key_paths(value, path)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                out |= key_paths(item, f"{path}[]")
        else:
            out.add(path)
    return out


def emitted(plan_name: str, shared: str) -> tuple[Any, dict[str, Any], dict[str, Any]] | None:
    d, files = files_of(PLANS[plan_name](), "llm-d", shared)
    by_path = {f.path: f.text for f in files}
    if "llm-d/modelservice-values.yaml" not in by_path:
        return None
    return (
        d,
        yaml.safe_load(by_path["llm-d/modelservice-values.yaml"]),
        yaml.safe_load(by_path["llm-d/inferencepool-values.yaml"]),
    )


def all_emitted() -> list[tuple[str, str, Any, dict[str, Any], dict[str, Any]]]:
    out = []
    for plan_name in sorted(PLANS):
        for shared in SHARED:
            got = emitted(plan_name, shared)
            if got:
                out.append((plan_name, shared, *got))
    return out


def test_every_key_is_the_charts() -> None:
    cases = all_emitted()
    # seed, seed-cpu-only and llama70b-tp2 on one node each, with every shared tier.
    assert len(cases) == 9
    for _plan, _shared, _d, ms, pool in cases:
        assert key_paths(ms) <= set(MS["values"]), key_paths(ms) - set(MS["values"])
        assert key_paths(pool) <= set(POOL["values"]), key_paths(pool) - set(POOL["values"])


@pytest.mark.parametrize("version", sorted(FLAGS["vllm"]))
def test_every_vllm_arg_is_a_recorded_flag(version: str) -> None:
    known = set(FLAGS["vllm"][version]["cli"])
    for _plan, _shared, _d, ms, _pool in all_emitted():
        argv = chart_argv(ms)
        used = {a.split("=", 1)[0] for a in argv if a.startswith("--")}
        assert used <= known, used - known
        # The chart adds these itself: the bundle's args must not repeat them.
        [container] = ms["decode"]["containers"]
        assert not set(MS["chart_argv"]) & set(container["args"])


def test_cpu_tier_bytes_are_the_plans() -> None:
    for plan_name, _shared, d, ms, _pool in all_emitted():
        plan = PLANS[plan_name]()
        [container] = ms["decode"]["containers"]
        argv = container["args"]
        config = json.loads(argv[argv.index("--kv-transfer-config") + 1])
        extra = config["kv_connector_extra_config"]
        replicas = ms["decode"]["replicas"]
        # One pod per instance of the plan, each with the instance's GPUs.
        assert replicas == plan.parallelism.total_replicas == len(d.heads)
        tp = plan.parallelism.tensor_parallel_size
        assert container["resources"]["limits"]["nvidia.com/gpu"] == str(tp)
        # cpu_bytes_to_use is the total over the pod's TP workers (engine_flags.md §1.1);
        # whole GiB per instance, rounded up (sizing/engines/vllm.py).
        planned = plan.cpu_tier.total_gib * GIB
        emitted_bytes = replicas * extra["cpu_bytes_to_use"]
        assert planned <= emitted_bytes < planned + replicas * GIB
        assert container["resources"]["requests"]["memory"] == (
            f"{extra['cpu_bytes_to_use'] // GIB}Gi"
        )
        assert extra["offload_prompt_only"] is True


def test_fs_tiers_are_mounted_where_vllm_writes() -> None:
    for _plan, shared, d, ms, _pool in all_emitted():
        [container] = ms["decode"]["containers"]
        argv = container["args"]
        extra = json.loads(argv[argv.index("--kv-transfer-config") + 1])[
            "kv_connector_extra_config"
        ]
        roots = [t["root_dir"] for t in extra.get("secondary_tiers", []) if t["type"] == "fs"]
        mounts = [m["mountPath"] for m in container.get("volumeMounts", [])]
        assert all(any(r.startswith(m + "/") for m in mounts) for r in roots)
        volumes = {v["name"]: v for v in ms["decode"].get("volumes", [])}
        assert ("kv-shared" in volumes) == (shared == "nfs")
        if shared == "nfs":
            assert volumes["kv-shared"]["nfs"] == {
                "server": d.tiers.nfs_server,
                "path": d.tiers.nfs_export,
            }
        assert ("kv-nvme" in volumes) == d.has_nvme


def test_every_pod_hashes_alike_and_checks_the_key() -> None:
    for _plan, _shared, d, ms, _pool in all_emitted():
        [container] = ms["decode"]["containers"]
        env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
        assert env["PYTHONHASHSEED"] == str(d.tiers.python_hash_seed)
        # vLLM checks requests against VLLM_API_KEY (vllm/envs.py), from a secret.
        assert env["VLLM_API_KEY"] == {"secretKeyRef": llmd.API_KEY_SECRET}
        args = container["args"]
        assert args[args.index("--prefix-caching-hash-algo") + 1] == "sha256"


def test_the_pod_holds_the_checkpoint_and_the_gateway_reaches_the_pool() -> None:
    """modelservice v0.4.12 downloads an hf:// model into an emptyDir of
    ``modelArtifacts.size`` (default 5Mi: the pod is evicted); inferencepool v1.4.0
    makes the HTTPRoute to the pool only with ``experimentalHttpRoute.enabled`` and takes
    ``provider.name`` from gke, istio, none (llmd_charts.json, read from the charts)."""
    ms_chart = llmd.chart("llm-d-modelservice", llmd.MODELSERVICE)
    pool_chart = llmd.chart("inferencepool", llmd.INFERENCEPOOL)
    for _plan, _shared, d, ms, pool in all_emitted():
        size = ms["modelArtifacts"]["size"]
        assert size != ms_chart["defaults"]["modelArtifacts.size"]
        assert size.endswith("Gi") and int(size[:-2]) * GIB >= d.weights_bytes > 0
        assert pool["provider"]["name"] in pool_chart["provider_names"]
        assert pool["experimentalHttpRoute"]["enabled"] is True
        assert "experimentalHttpRoute.enabled" in pool_chart["objects"]


def test_the_scheduler_scores_gpu_and_cpu_prefixes() -> None:
    for _plan, _shared, d, ms, pool in all_emitted():
        ext = pool["inferenceExtension"]
        config = yaml.safe_load(ext["pluginsCustomConfig"][ext["pluginsConfigFile"]])
        plugins = {p.get("name", p["type"]): p for p in config["plugins"]}
        assert {p["type"] for p in config["plugins"]} <= set(POOL["plugin_types"])
        cpu = plugins["cpu-prefix-cache-scorer"]["parameters"]
        assert set(cpu) <= set(POOL["prefix_cache_scorer_parameters"])
        # The CPU index holds the plan's conversations per instance in 16-token blocks.
        blocks = cpu["lruCapacityPerServer"]
        assert blocks * cpu["blockSizeTokens"] >= d.conversations_per_instance * d.context_tokens
        assert (blocks - d.conversations_per_instance) * 16 < (
            d.conversations_per_instance * d.context_tokens
        )
        assert cpu["autoTune"] is False
        weights = {
            p["pluginRef"]: p.get("weight") for p in config["schedulingProfiles"][0]["plugins"]
        }
        # llm-d guide tiered-prefix-cache/cpu: 2:2:1:1.
        assert [weights[k] for k in llmd.WEIGHTS] == [2, 2, 1, 1]
        # The pool selects the modelservice pods on the port vLLM listens on.
        assert (
            pool["inferencePool"]["modelServers"]["matchLabels"] == ms["modelArtifacts"]["labels"]
        )
        assert pool["inferencePool"]["targetPorts"] == [{"number": ms["routing"]["servicePort"]}]


def test_seed_values() -> None:
    # Seed example (docs/sizing.md): 4 pods of 1 GPU, 125 GiB each = 134,217,728,000 bytes;
    # 125 conversations per instance × 8,192 / 16 = 64,000 blocks.
    _d, ms, pool = emitted("seed-cpu-only", "none") or pytest.fail("no values")
    [container] = ms["decode"]["containers"]
    args = container["args"]
    assert ms["decode"]["replicas"] == 4
    assert '"cpu_bytes_to_use":134217728000' in args[args.index("--kv-transfer-config") + 1]
    ext = pool["inferenceExtension"]
    assert "lruCapacityPerServer: 64000" in ext["pluginsCustomConfig"][ext["pluginsConfigFile"]]


def test_layouts_a_pod_cannot_hold_are_named() -> None:
    for plan_name in ("deepseek-v3-pp2", "qwen3-moe-ep4"):
        assert emitted(plan_name, "none") is None
        assert any(
            "pipeline or data parallelism" in n for n in notes_of(PLANS[plan_name](), "llm-d")
        )


def test_a_key_the_chart_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match=r"decode\.replica"):
        llmd.require_keys("llm-d-modelservice", "v0.4.12", {"decode": {"replica": 2}})
