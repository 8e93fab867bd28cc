"""Router, Helm values, NUMA placement and shared-tier settings."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from sizing.engines import bundle, deployment, router
from sizing.engines.deployment import Deployment
from sizing.engines.placement import numa_node_of_gpu, slots
from sizing.engines.shared_tier import TierOptions
from sizing.errors import SizingError
from sizing.layout.cluster import router_for
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.units import GIB
from tests.engine_bundle import PLANS, files_of, option, parse_script, run_with_stubs, scripts
from tests.factories import plan_request


@pytest.mark.parametrize("plan_name", ["seed", "llama70b-tp2"])
def test_helm_buffer_equals_plan(plan_name: str) -> None:
    """production-stack chart 0.1.12: ``cpuOffloadingBufferSize`` is LMCache's
    ``max_local_cpu_size`` (GiB per worker); workers = tensorParallelSize × replicaCount."""
    plan = PLANS[plan_name]()
    _d, files = files_of(plan, "lmcache")
    values = yaml.safe_load(scripts(files, "helm-values.yaml")[0].text)
    spec = values["servingEngineSpec"]["modelSpec"][0]
    per_worker = spec["lmcacheConfig"]["cpuOffloadingBufferSize"]
    assert int(per_worker) > 0  # the chart drops values whose integer part is 0
    workers = spec["vllmConfig"]["tensorParallelSize"] * spec["replicaCount"]
    emitted = int(per_worker) * GIB * workers
    planned = plan.cpu_tier.total_gib * GIB
    # Rounding: whole GiB per worker, rounded up (sizing/engines/router.py).
    assert planned <= emitted < planned + workers * GIB
    if "diskOffloadingBufferSize" in spec["lmcacheConfig"]:
        # The chart does not set LMCACHE_LOCAL_DISK; without it the disk size does nothing.
        assert {"name": "LMCACHE_LOCAL_DISK", "value": "file:///data/lmcache/"} in spec["env"]


@pytest.mark.parametrize("shared", ["none", "nfs", "s3"])
@pytest.mark.parametrize("plan_name", ["seed", "llama70b-tp2"])
def test_helm_values_meet_the_chart(plan_name: str, shared: str) -> None:
    """What chart 0.1.12 requires and does (production_stack_chart.json, read from
    helm/templates at a6c01db): the render stops without requestCPU/requestMemory; the
    chart turns prefix caching off unless asked; a disk size without a volume lands on
    the container's layer; the in-process YAML's shared tier reaches the pods."""
    d, files = files_of(PLANS[plan_name](), "lmcache", shared)
    facts = router.chart_facts(d.versions.production_stack)
    values = yaml.safe_load(scripts(files, "helm-values.yaml")[0].text)
    [spec] = values["servingEngineSpec"]["modelSpec"]
    assert set(facts["required_model_spec"]) <= set(spec)
    assert set(spec) <= set(facts["model_spec_properties"])
    assert spec["vllmConfig"][facts["prefix_caching_off_unless"].split(".")[1]] is True
    assert spec["tag"] != facts["image"]["chart_default_tag"]
    # requestMemory covers what every worker of the pod pins.
    pinned = int(spec["lmcacheConfig"]["cpuOffloadingBufferSize"]) * d.tensor_parallel_size
    assert int(spec["requestMemory"].removesuffix("Gi")) > pinned
    env = {e["name"]: e.get("value") for e in spec["env"]}
    assert not set(env) & set(facts["chart_sets_lmcache_env"])
    mounts = {m["mountPath"]: m["name"] for m in spec.get("extraVolumeMounts", [])}
    volumes = {v["name"]: v for v in spec.get("extraVolumes", [])}
    if "diskOffloadingBufferSize" in spec["lmcacheConfig"]:
        disk = env["LMCACHE_LOCAL_DISK"].removeprefix("file://").rstrip("/")
        assert volumes[mounts[disk]]["hostPath"]["path"].startswith(d.tiers.nvme_mount)
    in_process = yaml.safe_load(scripts(files, "lmcache.yaml")[0].text)
    if shared == "s3":
        assert env["LMCACHE_REMOTE_URL"] == in_process["remote_url"]
        assert json.loads(env["LMCACHE_EXTRA_CONFIG"]) == in_process["extra_config"]
    if shared == "nfs":
        assert env["LMCACHE_REMOTE_STORAGE_PLUGINS"] == "fs"
        base = in_process["extra_config"]["remote_storage_plugin.fs.base_path"]
        assert any(base.startswith(m) for m in mounts)
    assert values["servingEngineSpec"]["vllmApiKey"] == router.HELM_API_KEY_SECRET


def seed_router_argv(d: Deployment, logic: list[str]) -> list[str]:
    """``docker`` as the NetApp seed's step 4 calls it, with this plan's backends (no
    key: the router forwards the client's Authorization header)."""
    return [
        "docker",
        *("run", "-d", "--rm", "--name", "vllm-router", "--network", "host"),
        "ghcr.io/vllm-project/production-stack/router:latest",
        *("--port", "8000", "--service-discovery", "static"),
        *("--static-backends", ",".join(f"http://{s.host}:{s.port}" for s in d.slots)),
        *("--static-models", ",".join([d.model_id] * len(d.slots))),
        *("--routing-logic", *logic),
    ]


def router_refusal(argv: list[str]) -> str | None:
    """Why the production-stack router at the recorded commit would refuse ``argv``
    (its flag list and ``validate_args`` rules in ``production_stack_chart.json``), or
    None when it accepts it."""
    facts = router.chart_facts("0.1.12")["router"]
    given = {
        a.split("=", 1)[0]: v
        for a, v in zip(argv, [*argv[1:], ""], strict=True)
        if a.startswith("--")
    }
    unknown = [f for f in given if f not in facts["flags"]]
    if unknown:
        return f"unknown flags {unknown}"
    missing = [f for f in facts["always_required"] if f not in given]
    for condition, needed in facts["required_with"].items():
        flag, value = condition.split("=")
        if given.get(flag) == value:
            missing += [f for f in needed if f not in given]
    return f"missing {missing}" if missing else None


def test_router_rules_refuse_what_the_router_refuses() -> None:
    """The checker itself: the summary line the bundle printed before (session routing
    without service discovery) is refused, as the router refuses it."""
    assert router_refusal(["--routing-logic", "session", "--session-key", "x"]) == (
        "missing ['--service-discovery']"
    )
    assert router_refusal(
        [
            "--service-discovery",
            "static",
            "--static-backends",
            "a",
            "--static-models",
            "m",
            "--routing-logic",
            "session",
        ]
    )


@pytest.mark.parametrize(
    ("shared", "logic"),
    [
        # Own tiers per instance: session affinity (sizing/engines/router.py).
        ("none", ["session", "--session-key", "x-session-id"]),
        # A shared tier: round robin, as the NetApp seed runs it.
        ("nfs", ["roundrobin"]),
    ],
)
def test_router_script_runs_the_seed_container(
    shared: str, logic: list[str], tmp_path: Path
) -> None:
    d, files = files_of(PLANS["llama70b-tp2"](), "vllm", shared)
    [script] = scripts(files, "vllm-router.sh")
    result, calls = run_with_stubs(script.text, tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls == [seed_router_argv(d, logic)]
    image = calls[0].index("ghcr.io/vllm-project/production-stack/router:latest")
    assert router_refusal(calls[0][image + 1 :]) is None


def test_every_vllm_instance_requires_the_shared_key(tmp_path: Path) -> None:
    _d, files = files_of(PLANS["seed"](), "lmcache")
    for f in scripts(files, "serve.sh"):
        result, calls = run_with_stubs(f.text, tmp_path)
        assert result.returncode == 1 and calls == [], f.path
        result, calls = run_with_stubs(f.text, tmp_path, env={"VLLM_API_KEY": "k"})
        assert result.returncode == 0 and calls[0][0] == "numactl", f.path


def test_numa_placement_follows_sockets() -> None:
    # Seed: 4 cards on 2 sockets, TP 1 -> cards 0,1 on node 0 and 2,3 on node 1.
    seed = slots(nodes=1, gpus_per_node=4, tensor_parallel_size=1, replicas_per_node=4, sockets=2)
    assert [s.numa_nodes for s in seed] == [(0,), (0,), (1,), (1,)]
    assert seed[2].numactl == ["numactl", "--cpunodebind=1", "--membind=1"]
    # TP 4 spans both sockets: bound to both nodes.
    wide = slots(nodes=1, gpus_per_node=4, tensor_parallel_size=4, replicas_per_node=1, sockets=2)
    assert wide[0].numa_nodes == (0, 1) and wide[0].cuda_visible_devices == "0,1,2,3"
    assert numa_node_of_gpu(7, gpus_per_node=8, sockets=2) == 1
    with pytest.raises(ValueError, match="do not fit"):
        slots(nodes=1, gpus_per_node=4, tensor_parallel_size=2, replicas_per_node=3, sockets=2)


def test_every_engine_script_is_bound_and_checked_first() -> None:
    d, files = files_of(PLANS["seed"](), "all")
    check = scripts(files, "check-topology.sh")[0].text
    assert "nvidia-smi topo -m" in check
    for s in d.slots:
        assert f"check {s.gpu_ids[0]} {s.numa_nodes[0]}" in check
    for f in scripts(files, "serve.sh"):
        assert "numactl \\\n  --cpunodebind=" in f.text and "--membind=" in f.text


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("shared", "ceph"),
        ("nvme_mount", "relative/path"),
        ("nfs_mount", "/mnt/../etc"),
        ("s3_bucket", "Bad_Bucket"),
        ("s3_region", "US EAST"),
        ("nfs_server", "bad host"),
        ("python_hash_seed", 2**32),
    ],
)
def test_tier_options_reject_bad_input(field: str, value: object) -> None:
    with pytest.raises(SizingError) as exc:
        TierOptions(**{field: value})  # type: ignore[arg-type]
    assert exc.value.field == field


def test_nfs_mount_and_s3_lifecycle() -> None:
    d, files = files_of(PLANS["seed"](), "vllm", "nfs")
    mount = scripts(files, "mount-shared.sh")[0].text
    assert f"{d.tiers.nfs_server}:{d.tiers.nfs_export}" in mount and "vers=4.2" in mount
    d, files = files_of(PLANS["seed"](), "vllm", "s3")
    paths = {f.path for f in files}
    assert {"shared/s3-lifecycle.json", "shared/s3-setup.sh"} <= paths


@pytest.mark.parametrize(
    ("endpoint", "host", "scheme"),
    [
        # A StorageGRID endpoint with a port: TLS stays on (NetApp seed; shared_tier.py).
        ("sg.example.net:10443", "sg.example.net:10443", "https"),
        # Plain http only when asked for.
        ("http://sg.example.net:8082", "sg.example.net:8082", "http"),
        ("https://s3.us-east-1.amazonaws.com", "s3.us-east-1.amazonaws.com", "https"),
    ],
)
def test_s3_endpoint_with_port_and_scheme(endpoint: str, host: str, scheme: str) -> None:
    plan = PLANS["seed"]()
    tiers = TierOptions(shared="s3", s3_endpoint=endpoint)
    d = deployment.from_plan(plan, tiers=tiers)
    files = [f for r in bundle.render(d, bundle.ENGINES) for f in r.files]
    lmcache = yaml.safe_load(scripts(files, "lmcache.yaml")[0].text)
    assert lmcache["remote_url"] == f"s3://{d.tiers.s3_bucket}.{host}"
    assert lmcache["extra_config"].get("disable_tls", False) is (scheme == "http")
    _env, vllm_argv = parse_script(scripts(files, "serve.sh")[0].text)
    [obj] = json.loads(option(vllm_argv, "--kv-transfer-config") or "")[
        "kv_connector_extra_config"
    ]["secondary_tiers"][-1:]
    assert obj["store_config"]["endpoint_override"] == host
    assert obj["store_config"]["scheme"] == scheme
    setup = scripts(files, "s3-setup.sh")[0].text
    assert f"--endpoint-url {scheme}://{host}" in setup.replace(" \\\n  ", " ")


@pytest.mark.parametrize("endpoint", ["sg.example.net:0", "ftp://sg.example.net", "a b:1"])
def test_s3_endpoint_refused(endpoint: str) -> None:
    with pytest.raises(SizingError) as exc:
        TierOptions(shared="s3", s3_endpoint=endpoint)
    assert exc.value.field == "s3_endpoint"


def test_pnfs_rdma_mount_as_the_seed_writes_it(tmp_path: Path) -> None:
    tiers = TierOptions(
        shared="nfs",
        nfs_server="storage.example.net",
        nfs_export="/kvcache",
        nfs_mount="/mnt/kvcache",
        nfs_mount_kind="pnfs-rdma",
    )
    d = deployment.from_plan(PLANS["seed"](), tiers=tiers)
    files = [f for r in bundle.render(d, ("vllm",)) for f in r.files]
    result, calls = run_with_stubs(scripts(files, "mount-shared.sh")[0].text, tmp_path)
    assert result.returncode == 0, result.stderr
    # NetApp seed: mount -o vers=4.1,proto=rdma,trunkdiscovery,write=eager,rsize=262144,
    # wsize=262144 my_storage.my_company.net:/kvcache /mnt/kvcache
    seed_options = "vers=4.1,proto=rdma,trunkdiscovery,write=eager,rsize=262144,wsize=262144"
    assert ["mount", "-t", "nfs", "-o", seed_options, f"{tiers.nfs_server}:/kvcache"] == calls[1][
        :6
    ]
    assert calls[1][6] == "/mnt/kvcache"
    plain = TierOptions(shared="nfs")
    d = deployment.from_plan(PLANS["seed"](), tiers=plain)
    files = [f for r in bundle.render(d, ("vllm",)) for f in r.files]
    result, calls = run_with_stubs(scripts(files, "mount-shared.sh")[0].text, tmp_path)
    assert result.returncode == 0 and "vers=4.2" in calls[1][4]


def test_a_shared_tier_without_a_cpu_tier_is_refused() -> None:
    """Qwen3-8B, 8,192 tokens, 200 users on 8 × H100: every conversation stays in GPU
    memory, so no engine gets a CPU tier and none would write to a shared tier (vLLM's
    secondary tiers sit behind its CPU tier; LMCache's remote backend needs its CPU
    buffer). The bundle refuses the shared tier instead of shipping it unused."""
    plan = make_plan(
        plan_request(
            model=from_catalog("Qwen/Qwen3-8B"),
            context_tokens=8192,
            users=200,
            gpu="h100-sxm",
            gpus_per_node=8,
        )
    )
    for shared in ("s3", "nfs"):
        d = deployment.from_plan(plan, tiers=TierOptions(shared=shared))
        assert not d.has_cpu_tier
        with pytest.raises(SizingError) as exc:
            bundle.render(d, bundle.ENGINES)
        assert exc.value.field == "shared" and "unused" in str(exc.value)
    assert bundle.render(deployment.from_plan(plan), bundle.ENGINES)


def test_the_lifecycle_rule_expires_every_engines_objects() -> None:
    """LMCache 0.5.6 writes at the bucket's root (s3_connector.py _format_safe_path:
    "/" + key); vLLM 0.33.0 under "<prefix>/" + "/" + "<model>_<hash>" (tiering/obj/
    manager.py root_dir, file_mapper.py _compute_base_path). One rule must match both."""
    d, files = files_of(PLANS["seed"](), "all", "s3")
    [rule] = json.loads(next(f.text for f in files if f.path == "shared/s3-lifecycle.json"))[
        "Rules"
    ]
    config = json.loads(scripts(files, "kv-transfer-config.json")[0].text)
    [obj] = [
        t for t in config["kv_connector_extra_config"]["secondary_tiers"] if t["type"] == "obj"
    ]
    vllm_key = f"{obj['prefix']}/" + "/" + d.model_id.replace("/", "_") + "_0123abcd/0_r0.bin"
    lmcache_key = "vllm@Qwen_Qwen3-32B-FP8@1@0@deadbeef"
    assert "///" not in vllm_key
    for key in (vllm_key, lmcache_key):
        assert key.startswith(rule["Filter"]["Prefix"]), key
    assert rule["Expiration"] == {"Days": 1} and rule["Status"] == "Enabled"


@pytest.mark.parametrize(
    ("endpoint", "http2"),
    [("http://sg.example.net:10443", False), ("s3.us-east-1.amazonaws.com", None)],
)
def test_lmcache_s3_client_follows_the_seed_on_storagegrid(endpoint: str, http2: bool) -> None:
    """NetApp seed (StorageGRID): s3_prefer_http2 false, s3_num_io_threads 320; LMCache's
    defaults (s3_adapter.py: HTTP/2, 64 threads) stay for AWS."""
    d = deployment.from_plan(PLANS["seed"](), tiers=TierOptions(shared="s3", s3_endpoint=endpoint))
    files = [f for r in bundle.render(d, ["lmcache"]) for f in r.files]
    extra = yaml.safe_load(scripts(files, "lmcache.yaml")[0].text)["extra_config"]
    assert extra.get("s3_prefer_http2") is http2
    assert extra.get("s3_num_io_threads") == (320 if http2 is False else None)
    notes = [n for r in bundle.render(d, ["lmcache"]) for n in r.notes]
    assert any("virtual-hosted" in n for n in notes)


def test_an_nfs_server_name_with_underscores_is_taken_with_a_note() -> None:
    """The seed's own storage host: mount resolves it through /etc/hosts or a resolver,
    though RFC 1123 host names have no '_'."""
    tiers = TierOptions(shared="nfs", nfs_server="my_storage.my_company.net")
    d = deployment.from_plan(PLANS["seed"](), tiers=tiers)
    rendered = bundle.render(d, ["vllm"])
    files = [f for r in rendered for f in r.files]
    assert "my_storage.my_company.net:/export/kvcache" in scripts(files, "mount-shared.sh")[0].text
    assert any("'_'" in n and "/etc/hosts" in n for r in rendered for n in r.notes)
    for bad in ("bad host", "a..b", "-x.example.net"):
        with pytest.raises(SizingError):
            TierOptions(nfs_server=bad)


def test_the_summary_router_command_is_one_the_router_accepts() -> None:
    """bundle.json summary.router: the production-stack router exits without
    --service-discovery (parser.py validate_args at a6c01db)."""
    for engine in ("vllm", "lmcache", "lmcache_server"):
        argv = shlex.split(router_for(engine).command)
        assert argv[0] == "vllm-router"
        assert router_refusal(argv[1:]) is None
