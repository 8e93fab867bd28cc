"""The ZIP bundle: every file parses, every script passes ``bash -n``, every name is
recorded for its engine version; the CLI and the quote download."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from configurator.deployments.services import bundle_build
from sizing.engines import router
from sizing.engines.bundle import ENGINES
from sizing.engines.flags import EngineVersions
from sizing.engines.shared_tier import TierOptions
from sizing.model.spec import catalog_entry, from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.summary import plan_summary
from tests.engine_bundle import FLAGS, PLANS, ROOT, SHARED, parse_script, run_with_stubs
from tests.factories import plan_request

VERSIONS = [
    EngineVersions(vllm="0.31.0", sglang="0.5.22", dynamo="1.5.1"),
    EngineVersions(vllm="0.33.0", sglang="0.5.23", dynamo="1.6.1"),
]


def unzip(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def recorded_cli(argv: list[str], v: EngineVersions) -> set[str] | None:
    """The recorded flag list for the program ``argv`` runs (engine_flags.json)."""
    if argv[:2] == ["vllm", "serve"]:
        return set(FLAGS["vllm"][v.vllm]["cli"])
    if argv[:2] == ["lmcache", "server"]:
        return set(FLAGS["lmcache"][v.lmcache]["server_cli"])
    if "sglang.launch_server" in argv:
        return set(FLAGS["sglang"][v.sglang]["cli"])
    if "dynamo.vllm" in argv:
        return set(FLAGS["dynamo"][v.dynamo]["worker_cli"])
    if "dynamo.frontend" in argv:
        return set(FLAGS["dynamo"][v.dynamo]["frontend_cli"])
    if argv[:1] == ["vllm-router"]:
        return set(FLAGS["production-stack"][v.production_stack]["router_cli"])
    return None


def recorded_env(path: str, v: EngineVersions) -> set[str]:
    if "/sglang/" in path:
        return set(FLAGS["sglang"][v.sglang]["env"])
    if "/dynamo/" in path:
        return set(FLAGS["dynamo"][v.dynamo]["env"])
    return set(FLAGS["vllm"][v.vllm]["env"]) | set(FLAGS["lmcache"][v.lmcache]["env"])


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("shared", SHARED)
@pytest.mark.parametrize("versions", VERSIONS, ids=["older", "newer"])
def test_every_file_is_valid(
    plan_name: str, shared: str, versions: EngineVersions, tmp_path: Path
) -> None:
    files = unzip(
        bundle_build(plan=PLANS[plan_name](), tiers=TierOptions(shared=shared), versions=versions)
    )
    assert "README.md" in files and "bundle.json" in files
    for path, text in files.items():
        if path.endswith(".json"):
            json.loads(text)
        elif path.endswith(".yaml"):
            assert isinstance(yaml.safe_load(text), dict)
        elif path.endswith(".sh"):
            script = tmp_path / path.replace("/", "_")
            script.write_text(text)
            result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
            assert result.returncode == 0, f"{path}: {result.stderr}"
            env, argv = parse_script(text)
            assert set(env) <= recorded_env(path, versions), path
            allowed = recorded_cli(argv, versions) if argv else None
            if allowed is not None:
                used = {a.split("=", 1)[0] for a in argv if a.startswith("--")}
                assert used <= allowed, f"{path}: {used - allowed}"
                if argv[:2] == ["vllm", "serve"] and "--kv-transfer-config" in argv:
                    config = json.loads(argv[argv.index("--kv-transfer-config") + 1])
                    assert set(config) <= set(FLAGS["vllm"][versions.vllm]["kv_transfer_config"])
    for path, text in files.items():
        if path.endswith("lmcache.yaml"):
            assert set(yaml.safe_load(text)) <= set(FLAGS["lmcache"]["0.5.6"]["yaml"])


def test_settings_that_do_nothing_or_the_opposite_are_never_emitted() -> None:
    for shared in SHARED:
        files = unzip(bundle_build(plan=PLANS["seed"](), tiers=TierOptions(shared=shared)))
        text = "\n".join(files.values())
        # Any value disables O_DIRECT (kvbm storage/disk.rs), "false" included.
        assert "DYN_KVBM_DISK_DISABLE_O_DIRECT" not in text
        for path, body in files.items():
            if not path.endswith(".sh"):
                continue
            argv = parse_script(body)[1]
            # The backend flag overwrites --kv-transfer-config; with lmcache the size is ignored.
            assert not ("--kv-offloading-backend" in argv and "--kv-transfer-config" in argv)
            assert not ("--kv-offloading-size" in argv and "--kv-transfer-config" in argv)
            if "--l2-adapter" in argv:
                types = [
                    json.loads(argv[i + 1])["type"]
                    for i, a in enumerate(argv)
                    if a == "--l2-adapter"
                ]
                assert "disk" not in types  # no such adapter type in LMCache 0.5.6


def test_zip_is_reproducible_and_scripts_executable() -> None:
    plan = PLANS["seed"]()
    first, second = bundle_build(plan=plan), bundle_build(plan=plan)
    assert first == second
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in archive.infolist()}
    assert all(mode == 0o755 for name, mode in modes.items() if name.endswith(".sh"))


def test_cli_writes_the_bundle(tmp_path: Path) -> None:
    out = tmp_path / "bundle.zip"
    call_command(
        "bundle",
        "--model",
        "Qwen/Qwen3-32B-FP8",
        "--context",
        "8192",
        "--users",
        "500",
        "--new-conversations-per-day",
        "2000",
        "--engine",
        "sglang",
        "--shared",
        "nfs",
        "--out",
        str(out),
    )
    files = unzip(out.read_bytes())
    assert "node1/sglang/instance3/serve.sh" in files
    assert not [p for p in files if "/vllm/" in p]
    assert json.loads(files["bundle.json"])["engines"] == ["sglang"]


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--engine", "trt"], "--engine"),
        (["--s3-bucket", "Not A Bucket"], "--s3-bucket"),
        (["--users", "0"], "--users"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args: list[str], flag: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "bundle",
            "--model",
            "Qwen/Qwen3-32B-FP8",
            "--context",
            "8192",
            "--users",
            "500",
            "--out",
            str(tmp_path / "b.zip"),
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and flag in result.stderr
    assert not (tmp_path / "b.zip").exists()


def step_numbers(readme: str) -> list[int]:
    """The numbers of the README's start-up steps, in order."""
    section = readme.split("## Order of steps on every node", 1)[1].split("\n## ", 1)[0]
    return [int(n) for n in re.findall(r"^(\d+)\. ", section, flags=re.MULTILINE)]


@pytest.mark.parametrize(
    ("plan_name", "shared", "steps"),
    [
        # Seed plan without new conversations: no NVMe tier; topology, API key, engines,
        # router (4 instances).
        ("seed-cpu-only", "none", 4),
        # seed_plan() sizes an NVMe tier (2,000 new conversations a day): + mount.
        ("seed", "none", 5),
        # + the shared tier's S3 setup or NFS mount.
        ("seed", "s3", 6),
        ("seed", "nfs", 6),
    ],
)
def test_readme_steps_are_numbered_consecutively(plan_name: str, shared: str, steps: int) -> None:
    plan = PLANS[plan_name]()
    readme = unzip(bundle_build(plan=plan, tiers=TierOptions(shared=shared)))["README.md"]
    assert step_numbers(readme) == list(range(1, steps + 1))


def test_uploaded_model_readme_lists_only_the_engines_in_the_zip(tmp_path: Path) -> None:
    # The QA case: the published Qwen3-32B-FP8 config.json uploaded as a private model,
    # 50 users. DESIGN.md: 51 conversations per card, 204 on four cards, so 50 users need
    # no CPU tier and only vLLM (without offloading) has files.
    config = tmp_path / "config.json"
    entry = catalog_entry("Qwen/Qwen3-32B-FP8")
    assert entry is not None
    config.write_text(json.dumps(entry["config"]))
    out = tmp_path / "bundle.zip"
    call_command(
        "bundle",
        *("--config", str(config), "--model-name", "private-32b", "--weights-gib", "32"),
        *("--context", "8192", "--users", "50", "--out", str(out)),
    )
    files = unzip(out.read_bytes())
    in_zip = sorted({p.split("/")[1] for p in files if p.count("/") >= 2} & set(ENGINES))
    assert in_zip == ["vllm"]
    manifest = json.loads(files["bundle.json"])
    assert manifest["engines"] == ["vllm"]
    left_out = ["dynamo", "llm-d", "lmcache", "lmcache-server", "sglang"]
    assert sorted(manifest["engines_left_out"]) == left_out
    readme = files["README.md"]
    assert "- Engines in this bundle: vllm.\n" in readme
    for engine in ("lmcache", "lmcache-server", "sglang", "dynamo", "llm-d"):
        # Each left-out engine is named with its renderer's reason (sizing/engines/*.py).
        assert re.search(rf"^  - {re.escape(engine)}: The plan has no CPU tier", readme, re.M)
    # topology, API key, engines, router (4 instances)
    assert step_numbers(readme) == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("out", "phrase"),
    [
        ("{tmp}", "is a directory"),
        ("/proc/kv-bundle.zip", "cannot write /proc/kv-bundle.zip"),
        ("{tmp}/missing/b.zip", "does not exist"),
    ],
)
def test_cli_unwritable_out_is_one_line_exit_2(out: str, phrase: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "bundle",
            *("--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500"),
            *("--out", out.format(tmp=tmp_path)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "--out" in line and phrase in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.django_db
def test_quote_bundle_download(admin_client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    from django.urls import reverse

    from configurator.quotes.models import Quote, QuoteAlternative

    quote = Quote.objects.create(customer_name="Example GmbH")
    inputs = {"model_id": "Qwen/Qwen3-32B-FP8", "context_tokens": 8192, "users": 500}
    QuoteAlternative.objects.create(quote=quote, label="seed", inputs=inputs, plan_summary={})
    url = reverse("deployments:quote_bundle", args=[quote.pk])
    response = admin_client.get(url, {"engine": "vllm"})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    files = unzip(response.content)
    assert "node1/vllm/instance0/serve-short.sh" in files
    bad = admin_client.get(url, {"shared": "s3", "s3_bucket": "Bad Bucket"})
    assert bad.status_code == 400 and b"s3_bucket" in bad.content
    assert admin_client.get(url, {"alternative": "7"}).status_code == 400
    user = django_user_model.objects.create_user("customer", password="x" * 12)
    from django.test import Client

    client = Client()
    client.force_login(user)
    assert client.get(url).status_code == 302  # staff only: redirected to the login


@pytest.mark.parametrize("shared", ["nfs", "s3"])
def test_readme_checks_the_shared_tier_across_instances(shared: str) -> None:
    """NetApp seed, step 5: a long prefix through the router, files or objects in the
    shared tier, a similar request that reaches the other instance."""
    plan = PLANS["llama70b-tp2"]()
    tiers = TierOptions(shared=shared)
    readme = unzip(bundle_build(plan=plan, engine="vllm", tiers=tiers))["README.md"]
    check = readme.split("## How to check that tiering works", 1)[1].split("\n## ", 1)[0]
    ports = [s.port for s in plan_slots(plan)]
    for port in ports:
        assert f"http://node1:{port}/v1/models" in check
    assert "curl -s http://localhost:8000/v1/chat/completions" in check
    assert check.count('ask "Question') == len(ports)  # one per instance, round robin
    listing = f"ls -ltr {tiers.nfs_mount}/" if shared == "nfs" else "s3 ls --recursive s3://"
    assert listing in check


@pytest.mark.parametrize("plan_name", ["seed", "llama70b-tp2"])
def test_the_cross_instance_check_fits_the_context_and_reads_the_hits(
    plan_name: str, tmp_path: Path
) -> None:
    """The check's prompt fits the ``--max-model-len`` the instances start with (vLLM
    refuses a longer one and the answer has no usage), and it reads vLLM's
    ``vllm:external_prefix_cache_hits`` counter (vllm/v1/metrics/loggers.py, 0.33.0) of
    every instance before and after. Run with stub curl, jq and aws."""
    plan = PLANS[plan_name]()
    d = plan_slots(plan)
    readme = unzip(bundle_build(plan=plan, engine="vllm", tiers=TierOptions(shared="s3")))[
        "README.md"
    ]
    block = readme.split("4. Across instances", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    (tmp_path / "api-key.env").write_text("VLLM_API_KEY=k\n")
    result, calls = run_with_stubs(block, tmp_path)
    assert result.returncode == 0, result.stderr
    asked = [c for c in calls if c[0] == "jq" and "-n" in c]
    assert len(asked) == len(d)
    context = plan.request.workload.context_tokens
    for call in asked:
        lines = call[call.index("p") + 1].splitlines()  # the prefix; the question follows
        # No line exceeds CHECK_LINE_TOKENS tokens at 3.5 characters a token, the least
        # English text averages with the Qwen, Llama and DeepSeek tokenizers.
        assert max(len(line) for line in lines) / 3.5 <= router.CHECK_LINE_TOKENS
        assert len(lines) * router.CHECK_LINE_TOKENS + 16 <= context  # + max_tokens
        assert len(lines) >= 256  # several LMCache chunks of 256 tokens
    metrics = [c[-1] for c in calls if c[0] == "curl" and c[-1].endswith("/metrics")]
    assert metrics == 2 * [f"http://{s.host}:{s.port}/metrics" for s in d]
    assert "vllm:external_prefix_cache_hits_total" in block


def plan_slots(plan):  # type: ignore[no-untyped-def]
    from sizing.engines import deployment

    return deployment.from_plan(plan).heads


def test_readme_and_summary_report_the_nvme_reload() -> None:
    plan = PLANS["seed"]()
    # One conversation (1 GiB, docs/sizing.md) at the chosen drive's sequential read rate.
    drive = plan.nvme.drive
    assert drive is not None
    expected_ms = 2**30 / (drive.seq_read_gbs * 1e9) * 1000
    assert plan_summary(plan)["nvme_reload_ms"] == pytest.approx(expected_ms, abs=0.05)
    readme = unzip(bundle_build(plan=plan))["README.md"]
    assert f"about {expected_ms:.0f} ms more to read from one drive" in readme


def test_hybrid_model_carries_the_release_caveat() -> None:
    from sizing.model.spec import from_catalog
    from sizing.plan.orchestrator import make_plan
    from tests.factories import plan_request

    # Nemotron Nano 9B v2 has Mamba-2 layers (its config's hybrid_override_pattern).
    plan = make_plan(
        plan_request(
            model=from_catalog("nvidia/NVIDIA-Nemotron-Nano-9B-v2"), context_tokens=32768, users=400
        )
    )
    readme = unzip(bundle_build(plan=plan))["README.md"]
    assert "is a hybrid model" in readme and "vLLM 0.33.0" in readme
    seed = unzip(bundle_build(plan=PLANS["seed"]()))["README.md"]
    assert "is a hybrid model" not in seed  # Qwen3-32B: full attention in every layer


@pytest.mark.parametrize("offload_decode", [False, True])
def test_offload_prompt_only_is_written_and_explained(offload_decode: bool) -> None:
    tiers = TierOptions(offload_decode=offload_decode)
    files = unzip(bundle_build(plan=PLANS["seed"](), tiers=tiers))
    config = json.loads(files["node1/vllm/instance0/kv-transfer-config.json"])
    # vLLM's default is true (vllm/v1/kv_offload/base.py); false only when asked.
    assert config["kv_connector_extra_config"]["offload_prompt_only"] is (not offload_decode)
    lmcache = yaml.safe_load(files["node1/lmcache/instance0/lmcache.yaml"])
    assert lmcache["save_decode_cache"] is offload_decode
    # The multiprocess server's connector: lmcache.mp.save_decode_cache, false unless
    # set (lmcache/integration/vllm/lmcache_mp_connector.py, 0.5.6).
    _env, argv = parse_script(files["node1/lmcache-server/instance0/serve.sh"])
    mp = json.loads(argv[argv.index("--kv-transfer-config") + 1])
    assert mp["kv_connector_extra_config"]["lmcache.mp.save_decode_cache"] is offload_decode
    readme = files["README.md"]
    phrase = "last answer is recomputed" if not offload_decode else "finds its last answer"
    assert phrase in readme
    # vLLM's and LMCache's renderings both carry this note: the README states it once.
    note = "Only prompt blocks are offloaded" if not offload_decode else "Decode blocks are"
    assert readme.count(note) == 1
    manifest = json.loads(files["bundle.json"])
    assert len(manifest["notes"]) == len(set(manifest["notes"]))


def test_a_plan_that_needs_a_shared_tier_says_so_when_none_is_given() -> None:
    """The seed with 50,000 users on nodes of 24 × 48 GB needs many nodes and a shared
    tier for what their CPU tiers leave (``shared_tier_tb`` 53.69 in the plan summary):
    without ``--shared`` the README warns at the top and bundle.json records "required,
    not configured", never "none"."""
    plan = make_plan(
        plan_request(
            model=from_catalog("Qwen/Qwen3-32B-FP8"),
            context_tokens=8192,
            users=50_000,
            max_host_memory_gb=1152,
        )
    )
    summary = plan_summary(plan)
    assert summary["nodes"] > 1 and summary["shared_tier_tb"] > 0
    files = unzip(bundle_build(plan=plan, engine="vllm", tiers=TierOptions()))
    head = files["README.md"].split("## What runs where", 1)[0]
    assert "**Shared tier: required, not configured.**" in head
    assert "--shared nfs" in head and f"{summary['shared_tier_tb']:.1f} TB" in head
    assert "Shared tier: none." not in files["README.md"]
    assert json.loads(files["bundle.json"])["tiers"]["shared"] == "required, not configured"
    configured = unzip(bundle_build(plan=plan, engine="vllm", tiers=TierOptions(shared="nfs")))
    assert json.loads(configured["bundle.json"])["tiers"]["shared"] == "nfs"
    assert "required, not configured" not in configured["README.md"]
    single = unzip(bundle_build(plan=PLANS["seed"](), engine="vllm", tiers=TierOptions()))
    assert json.loads(single["bundle.json"])["tiers"]["shared"] == "none"


def test_one_node_with_a_shared_tier_reads_in_the_singular() -> None:
    """The seed's 500 users on one node of 2 RTX PRO 6000 with at most 384 GB of host
    memory (twice the GPUs' 192 GB, the least allowed) keep 0.54 TB in a shared tier:
    the README speaks of 1 node, not "1 nodes"."""
    plan = make_plan(
        plan_request(
            model=from_catalog("Qwen/Qwen3-32B-FP8"),
            context_tokens=8192,
            users=500,
            gpus_per_node=2,
            max_host_memory_gb=384,
        )
    )
    summary = plan_summary(plan)
    assert summary["nodes"] == 1 and summary["shared_tier_tb"] > 0
    readme = " ".join(
        unzip(bundle_build(plan=plan, engine="vllm", tiers=TierOptions()))["README.md"].split()
    )
    assert "1 nodes" not in readme and "node(s)" not in readme
    assert "The plan's 1 node needs a > shared" in readme  # a quoted Markdown block
    assert f"{summary['shared_tier_tb']:.1f} TB for 1 node," in readme
    assert "- 1 node, 2 engine instances:" in readme
