"""Workflows of the deployment bundle: render a plan's engine files and pack them."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from collections.abc import Sequence
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation

from sizing.engines import bundle, deployment, llmd, router
from sizing.engines.deployment import BundleFile, Deployment, Rendered
from sizing.engines.flags import EngineVersions, parallel_source, source
from sizing.engines.shared_tier import TierOptions
from sizing.engines.vllm import role
from sizing.plan.orchestrator import Plan
from sizing.summary import plan_summary

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
"""Fixed timestamp of every ZIP entry, so the same plan gives the same bytes."""


def bundle_render(
    *,
    plan: Plan,
    engine: str = "all",
    tiers: TierOptions | None = None,
    versions: EngineVersions | None = None,
) -> tuple[Deployment, tuple[Rendered, ...]]:
    """Render the engine files of ``plan`` for ``engine`` (a key or ``all``).

    Raises:
        sizing.errors.SizingError: for an unknown engine (field ``engine``).
    """
    engines = bundle.engines_for(engine)
    d = deployment.from_plan(plan, tiers=tiers, versions=versions)
    return d, bundle.render(d, engines)


def _included(rendered: Sequence[Rendered]) -> list[Rendered]:
    """The renderings whose files are in the bundle (engines left out have none)."""
    return [r for r in rendered if r.engine not in bundle.ENGINES or r.files]


def _left_out(rendered: Sequence[Rendered]) -> list[Rendered]:
    """Engines asked for that emitted no file; their notes say why."""
    return [r for r in rendered if r.engine in bundle.ENGINES and not r.files]


def _steps(d: Deployment, engines: Sequence[str], paths: set[str]) -> list[str]:
    """The README's start-up steps in order (keys the template words and numbers)."""
    steps = ["topology"]
    if d.has_nvme:
        steps.append("nvme")
    if any(p.endswith("/mount-shared.sh") for p in paths):
        steps.append("shared-nfs")
    if "shared/s3-setup.sh" in paths:
        steps.append("shared-s3")
    if "api-key.env" in paths:
        steps.append("api-key")
    if engines:
        steps.append("engines")
    if "router/vllm-router.sh" in paths:
        steps.append("router")
    return steps


def _notes(rendered: Sequence[Rendered]) -> list[str]:
    """The included engines' notes in order, each once (vLLM and LMCache both state
    which blocks are offloaded: ``sizing.engines.vllm.prompt_only_note``)."""
    return list(dict.fromkeys(n for r in _included(rendered) for n in r.notes))


def _readme(plan: Plan, d: Deployment, rendered: Sequence[Rendered]) -> str:
    included = _included(rendered)
    engines = [r.engine for r in included if r.engine in bundle.ENGINES]
    versions = d.versions
    context: dict[str, Any] = {
        "plan": plan,
        "summary": plan_summary(plan),
        "gpu_name": plan.gpu.name,
        "d": d,
        "rendered": rendered,
        "engines": engines,
        "left_out": [(r.engine, r.notes) for r in _left_out(rendered)],
        "steps": _steps(d, engines, {f.path for r in rendered for f in r.files}),
        "notes": _notes(rendered),
        "versions": [
            (name, version, source(key, version), parallel_source(key, version))
            for name, key, version in (
                ("vLLM", "vllm", versions.vllm),
                ("LMCache", "lmcache", versions.lmcache),
                ("SGLang", "sglang", versions.sglang),
                ("Dynamo", "dynamo", versions.dynamo),
                ("production-stack", "production-stack", versions.production_stack),
            )
        ],
        "charts": [
            (name, version, llmd.chart(name, version)["source"])
            for name, version in (
                ("llm-d-modelservice", llmd.MODELSERVICE),
                ("inferencepool", llmd.INFERENCEPOOL),
            )
        ]
        if "llm-d" in engines
        else [],
        "files": sorted(f.path for r in rendered for f in r.files),
        "has_router": "router/vllm-router.sh" in {f.path for r in rendered for f in r.files},
        "heads_after_first": list(range(2, len(d.heads) + 1)),
        "check_prefix_lines": router.check_prefix_lines(d),
        "check_prefix_tokens": router.check_prefix_lines(d) * router.CHECK_LINE_TOKENS,
        "cpu_gib_per_instance": f"{d.cpu_bytes_per_instance / 2**30:.2f}",
        "nvme_gb_per_instance": f"{d.nvme_bytes_per_instance / 10**9:.0f}",
        "rows": [
            (
                s.node,
                s.name,
                role(d, s),
                s.cuda_visible_devices,
                ",".join(map(str, s.gpu_numa or s.numa_nodes)),
                s.port if s.is_head else "-",
            )
            for s in d.slots
        ],
    }
    with translation.override("en"):
        return render_to_string("deployments/README.md", context)


SHARED_REQUIRED_NOT_CONFIGURED = "required, not configured"
"""``tiers.shared`` in ``bundle.json`` when the plan sizes a shared tier (its
``shared_tier_tb`` > 0) but the bundle was asked for without one (``--shared none``)."""


def shared_tier_state(shared: str, shared_tier_tb: float | None) -> str:
    """The bundle's shared-tier entry: ``nfs``/``s3`` as configured, else ``none``, or
    :data:`SHARED_REQUIRED_NOT_CONFIGURED` when the plan needs one (``shared_tier_tb``,
    TB, the plan summary's figure, > 0)."""
    if shared == "none" and (shared_tier_tb or 0) > 0:
        return SHARED_REQUIRED_NOT_CONFIGURED
    return shared


def _manifest(plan: Plan, d: Deployment, rendered: Sequence[Rendered]) -> str:
    doc = {
        "summary": plan_summary(plan),
        "engines": [r.engine for r in _included(rendered) if r.engine in bundle.ENGINES],
        "engines_left_out": {r.engine: list(r.notes) for r in _left_out(rendered)},
        "versions": {
            "vllm": d.versions.vllm,
            "lmcache": d.versions.lmcache,
            "sglang": d.versions.sglang,
            "dynamo": d.versions.dynamo,
            "production_stack": d.versions.production_stack,
        },
        "tiers": {
            "nvme_mount": d.tiers.nvme_mount if d.has_nvme else None,
            "shared": shared_tier_state(d.tiers.shared, plan_summary(plan)["shared_tier_tb"]),
            "python_hash_seed": d.tiers.python_hash_seed,
        },
        "instances": [
            {
                "node": s.node,
                "name": s.name,
                "gpus": list(s.gpu_ids),
                "numa_nodes": list(s.numa_nodes),
                "port": s.port if s.is_head else None,
                "pipeline_stage": s.stage,
                "pipeline_stages": s.stages,
                "data_parallel_rank": s.dp_rank,
                "cpu_tier_bytes": d.cpu_bytes_per_instance,
                "cpu_tier_bytes_on_node": round(d.cpu_bytes_on_node(s)),
                "nvme_tier_bytes": d.nvme_bytes_per_instance,
            }
            for s in d.slots
        ],
        "notes": _notes(rendered),
    }
    return json.dumps(doc, indent=2) + "\n"


def bundle_files(
    *,
    plan: Plan,
    engine: str = "all",
    tiers: TierOptions | None = None,
    versions: EngineVersions | None = None,
) -> list[BundleFile]:
    """Every file of the bundle: ``README.md``, ``bundle.json`` and the engine files."""
    d, rendered = bundle_render(plan=plan, engine=engine, tiers=tiers, versions=versions)
    files = [
        BundleFile("README.md", _readme(plan, d, rendered)),
        BundleFile("bundle.json", _manifest(plan, d, rendered)),
    ]
    files += [f for r in rendered for f in r.files]
    return files


def bundle_build(
    *,
    plan: Plan,
    engine: str = "all",
    tiers: TierOptions | None = None,
    versions: EngineVersions | None = None,
) -> bytes:
    """The bundle as ZIP bytes; scripts are marked executable.

    Raises:
        sizing.errors.SizingError: for an unknown engine or invalid tier option.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for f in bundle_files(plan=plan, engine=engine, tiers=tiers, versions=versions):
            info = zipfile.ZipInfo(f.path, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            mode = 0o755 if f.executable else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            archive.writestr(info, f.text)
    return buffer.getvalue()
