"""``manage.py accuracy``: predict measured KV pools (``--kind kv``, the default),
measured TTFTs (``--kind ttft``, :mod:`configurator.planning.ttft_accuracy`) or published
multi-turn hit rates and throughput ratios (``--kind traffic``,
:mod:`configurator.planning.traffic_accuracy`) and compare.

The cases file follows the schema of the bundled ``sizing/data/ground_truth_cases.json``
(a list of cases, or an object with a ``cases`` list). Only inputs known before the
engine starts feed the prediction; measured figures are read only for the comparison.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from configurator.planning import traffic_accuracy, ttft_accuracy
from configurator.planning.cli import SizingCommand
from configurator.uploads import JsonRefused, parse_json, read_at_most
from sizing.memory.calibrated.accuracy import MISS_PCT, CaseResult, evaluate, misses

MAX_CASES_BYTES = 16 * 2**20
"""A cases file larger than this (16 MiB) is not read: the bundled ones are under 100 kB."""


def _load_cases(path: str) -> list[dict[str, Any]]:
    try:
        raw = read_at_most(Path(path), MAX_CASES_BYTES)  # a device never ends
        if raw is None:
            raise CommandError(
                f"--cases: {path} is larger than {MAX_CASES_BYTES:,} bytes", returncode=2
            )
        data = parse_json(raw.decode("utf-8"))
    except OSError as exc:
        raise CommandError(f"--cases: cannot read {path}: {exc.strerror}", returncode=2) from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"--cases: {path} is not UTF-8 text", returncode=2) from exc
    except JsonRefused as exc:
        raise CommandError(f"--cases: {path} is not JSON: {exc.detail}", returncode=2) from exc
    cases = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise CommandError(
            f"--cases: {path} must hold a list of cases or an object with a 'cases' list",
            returncode=2,
        )
    return cases


def _fmt(value: float | int | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _rows(results: list[CaseResult]) -> list[list[str]]:
    rows = []
    for r in results:
        if r.skipped:
            rows.append(
                [
                    r.case_id,
                    r.engine,
                    r.engine_version,
                    r.model_id,
                    *([""] * 5),
                    _split(r),
                    f"skipped: {r.skipped}",
                ]
            )
            continue
        rows.append(
            [
                r.case_id,
                r.engine,
                r.engine_version,
                r.model_id,
                _fmt(r.predicted_kv_cache_gib, ".2f"),
                _fmt(r.measured_kv_cache_gib, ".2f"),
                _fmt(r.error_pct, "+.2f"),
                _fmt(r.predicted_kv_cache_tokens, ","),
                _fmt(r.measured_kv_cache_tokens, ","),
                _split(r),
                _band(r),
            ]
        )
    return rows


def _band(result: CaseResult) -> str:
    """The note of a case whose version range spans a change of terms."""
    if result.predicted_band_gib is None:
        return ""
    low, high = result.predicted_band_gib
    return f"band: {low:.2f}–{high:.2f} GiB"


HEADERS = [
    "case",
    "engine",
    "version",
    "model",
    "predicted KV GiB",
    "measured KV GiB",
    "error %",
    "predicted tokens",
    "measured tokens",
    "split",
    "note",
]


def _split(result: CaseResult) -> str:
    """``fit: <terms>`` for an in-sample case, ``held out`` otherwise."""
    return f"fit: {', '.join(result.fitted_terms)}" if result.fitted_terms else "held out"


def _summary_lines(summary: dict[str, Any]) -> list[str]:
    lines = [
        f"evaluated: {summary['evaluated']} ({summary['evaluated_share_pct']} % of the cases "
        f"that state their inputs), skipped: {summary['skipped']}, of them not evaluable "
        f"(a log that does not state an input; not counted toward the targets): "
        f"{summary['not_evaluable']}",
        f"all engines: {_errors(summary)}",
    ]
    for engine, stats in summary["by_engine"].items():
        lines.append(f"{engine}: {_cases(stats['evaluated'])}, {_errors(stats)}")
    labels = {
        "fit": "fit set (a constant was set from their logs, in-sample)",
        "held_out": "held out (no constant set from them, out-of-sample)",
    }
    for engine in ("vllm", "sglang"):
        for split, stats in summary.get(f"{engine}_by_split", {}).items():
            if stats["evaluated"]:
                lines.append(
                    f"{engine}, {labels[split]}: {_cases(stats['evaluated'])}, {_errors(stats)}"
                )
    for target in summary.get("targets", []):
        sign = "≤" if target["kind"] == "max" else "≥"
        state = {True: "met", False: "not met", None: "no cases"}[target["met"]]
        lines.append(
            f"target {target['target']} {sign} {target['limit']:g} %: "
            f"{_fmt(target['value'], 'g')} %, {state}"
        )
    return lines


def _cases(count: int) -> str:
    return f"{count} case" if count == 1 else f"{count} cases"


def _errors(stats: dict[str, Any]) -> str:
    return (
        f"median |error| {stats['median_abs_error_pct']} %, p90 |error| "
        f"{stats['p90_abs_error_pct']} %, max |error| {stats['max_abs_error_pct']} %"
    )


MISS_NOTES: dict[tuple[str, str], str] = {
    ("case-036", "moonshotai/Kimi-Dev-72B"): "the weights nearly fill the GPUs (a 3 GiB KV pool).",
    ("case-043", "Qwen/Qwen2.5-72B-Instruct"): "the weights nearly fill the GPUs (a 3 GiB KV "
    "pool).",
    ("case-093", "Qwen/Qwen3-235B-A22B-FP8"): "4.8 GiB per GPU more is used than the model "
    "explains (NCCL and custom all-reduce at 0.55 GiB, no all-reduce fusion before 0.17). The "
    "launch states the LMCache connector (kv_connector LMCacheConnectorV1), but LMCache's own "
    "GPU buffer is one chunk (2 × 94 layers × 256 tokens × 128 values, about 12 MB per rank: "
    "lmcache/v1/gpu_connector.py VLLMPagedMemGPUConnectorV2), so it does not explain the gap; "
    "the log quotes only the KV lines, so which term holds it cannot be read from it.",
    ("case-076", "Qwen/Qwen3-32B"): "the build is a range (~0.10.2-0.11) across v0.11.1, "
    "where the FlashInfer sampler became opt-in: its ends differ by 3.4 GiB of the sampler's "
    "peak on a 4.45 GiB pool. The logged 5.64 GiB of activation is the sort path's, i.e. a "
    "0.11.1 or later image; at that end the prediction is 4.45 GiB.",
    ("case-084", "Qwen/Qwen3-VL-4B-Instruct-FP8"): "the weights: the catalog has no "
    "checkpoint size for this model; the estimate (FP8 decoder, 16-bit embedding, output "
    "layer and vision tower: 5.61 GiB, which the Hub's element count of the checkpoint "
    "confirms) and the rotary table (0.06 GiB) leave 0.47 GiB of the 6.14 GiB the engine "
    "loaded unexplained, the stated band of an unpublished FP8 checkpoint.",
    ("case-080", "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"): "the profile peak is 1.40 GiB "
    "logged against 0.71 predicted with FlashInfer's sampler; PyTorch's sort, which a v0.10 "
    "build without the flashinfer package runs, gives 1.44 GiB at 256 sequences, and the "
    "log does not say which ran.",
    ("case-064", "Qwen/QwQ-32B"): "the log's free memory falls from 21.63 to 6.09 GiB "
    "while loading, 15.54 GiB per GPU against the checkpoint's 15.26 GiB share; the 0.28 GiB "
    "SGLang loads beside it per rank is not modelled, and on a 2.84 GiB pool it is the "
    "whole error.",
    ("case-094", "Qwen/Qwen3-235B-A22B-FP8"): "the free memory before load at TP 4 is "
    "estimated (0.86 GiB of NCCL and context overhead); SGLang sizes from measured free "
    "memory.",
}
"""What each known miss of the bundled cases would need before start, by (case id,
model): shown only for a case of that id and model that still misses."""


def _miss_lines(results: list[CaseResult]) -> list[str]:
    lines = [
        "## Cases that miss, and what would be needed before start",
        "",
        f"Cases with |error| above {MISS_PCT:g} %, largest first, and skipped cases.",
        "",
    ]
    missed = misses(results)
    for r in missed:
        note = MISS_NOTES.get((r.case_id, r.model_id), "no explanation recorded.")
        lines.append(
            f"- {r.case_id} ({r.engine} {r.engine_version or 'version not stated'}, "
            f"{r.model_id}, {r.error_pct:+.2f} %): {note}"
        )
    for r in results:
        if r.skipped:
            lines.append(f"- {r.case_id} ({r.engine}, {r.model_id}): skipped, {r.skipped}.")
    if not missed and not any(r.skipped for r in results):
        lines.append("- none")
    return [*lines, ""]


METHOD_NOTES = [
    "## What is fitted, and the held-out figures",
    "",
    'A case is in the "fit set" (in-sample) when its log set one of the constants below: '
    "the cases file names the term in the case's `fitted_terms`. Every other case is held "
    "out, and its figures are the out-of-sample measure. A case added after the constants "
    "were set is held out by rule, whatever its prediction (case-102). A case whose log "
    "does not state an input the prediction needs carries the reason in `not_evaluable` and "
    "is skipped; it does not count toward the targets, while a case skipped for another reason "
    "counts against the evaluated share. Each version-dependent term applies "
    "only to the range its evidence covers:",
    "",
    "| term | value | versions | evidence | fitted on (in-sample cases) |",
    "|---|---|---|---|---|",
    "| V1 activation peak, sampler without a sort (FlashInfer; Triton top-k/top-p from "
    "0.17) | (batched / 8192) × (0.0429 + 1.8e-5 × hidden) + (seqs / 1024) × 1.3827e-5 × "
    "vocab GiB, MoE +0.45, fp32 +0.32 | 0.7–0.11.0 with FlashInfer installed (the default "
    "taken), 0.17 and later | the llm-d-planner 0.19.0 sweep (activation logged per case); "
    "topk_topp_sampler.py of the 0.11.0, 0.11.1 and 0.17.0 wheels | the 33 sweep logs, "
    "case-002 to case-059 |",
    "| V1 activation peak, PyTorch-sort sampler | (batched / 8192) × (0.0429 + 1.8e-5 × "
    "hidden) + (seqs / 1024) × 3.62e-5 × vocab GiB, no MoE term | 0.11.1 up to 0.17 (the "
    "FlashInfer sampler is opt-in from 0.11.1), earlier builds without FlashInfer (the band "
    "of a version before 0.11.1) | the five H100 rows of llm-d-benchmark "
    "empirical-vllm-memory-results.md (4.76–7.38 GiB); the llm-d-planner 0.16→0.17 step of "
    "Qwen3-14B (+3.40 GiB of KV, the two rules differ by 3.37) | case-076 (and case-072, "
    "skipped); checked on case-060/061 (0.15, 0.16) |",
    "| V0 activation | 3 × (intermediate / TP + hidden) values per token over the V0 "
    "profile tokens | before 0.7 | read from LlamaMLP; checked on case-090/091 | none |",
    "| non-torch, TP 1 | 0.25 GiB (0.15+), 0.14 GiB (0.7–0.14), 0.35 GiB (V0) | as listed | "
    "the 0.19.0 sweep; the 0.10 logs; vllm issue #10517 | 0.25: the sweep's TP 1 logs; "
    "0.14: case-072/076/086; 0.35: case-090/091 |",
    "| non-torch, TP ≥ 2 | 2.1 GiB with the FlashInfer all-reduce + RMSNorm fusion; without "
    "it 0.55 GiB on NVSwitch servers, 0.21 GiB on PCIe cards | the fusion: 0.17 and later at "
    "TP > 1 on compute capability 9.0 and 10.x (before 0.21 only with PP 1 and DP 1) | "
    "enable_allreduce_rms_fusion in vllm/config/vllm.py (0.17.0–0.31.0 wheels); the 0.19.0 "
    "H100 logs (2.07–2.21); llm-d-benchmark Llama-3.3-70B-FP8 at TP 2 on H100 (0.55); the "
    "0.10 L40S and A100 PCIe logs (0.21) | 2.1: the sweep's TP ≥ 2 logs; 0.21: "
    "case-069/070/080; 0.55: the llm-d-benchmark row (not a case) |",
    "| non-torch, PP ≥ 2 | 0.07 GiB | 0.7 and later | the 0.19.0 PP 4 log | case-026 |",
    "| MXFP4 experts (gpt-oss) | Marlin: intermediate per rank to 128, hidden to 256; "
    "Triton: intermediate to 64, biases in fp32, scales held twice | Triton on compute "
    "capability 9.0–10.x from 0.11, Marlin otherwise | mxfp4.py (Mxfp4MoEMethod); H100 logs "
    "of gpt-oss-120b: v0.10.1 Marlin 65.97 GiB (vllm issue #23278), v0.14.1 Triton 64.38 GiB "
    "(vllm issue #33155); case-070 (A100, Marlin) | none |",
    "| CUDA-graph estimate | 0.85 GiB (TP 1), 1.5 GiB (TP ≥ 2) unless the setup states "
    "graph profiling off (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0, --enforce-eager); band "
    "−0.8 GiB | 0.20 and later (the variable defaults to 0 in the 0.19.0 wheel's envs.py, "
    "to 1 from the 0.20.0 wheel) | gpu_worker.py of the 0.19.0–0.31.0 wheels: from 0.27.1 the "
    "logged peak activation holds the applied estimate, so logs read as requested − weights "
    "− activation − non-torch have it inside their activation; logged estimates with few "
    "capture sizes 0.09–0.36 GiB (gpustack/runner PR #251, noonghunna/club-3090 issue #434) "
    "| the size: the sweep's printed estimates (not subtracted in 0.19) |",
    "| batched tokens and sequences | 8192 / 1024 on GPUs ≥ 70 GiB that are not A100, else "
    "2048 / 256; 16384 tokens on GPUs ≥ 160 GiB from 0.28; 8192 / 1024 on every GPU from "
    "0.31 | as listed | EngineArgs._set_default_args of the 0.11.0–0.31.0 wheels | none |",
    "| version ranges | predicted at both ends and at every version inside where a term "
    "changes; the middle of the band, which the case's note gives | all | — | none |",
    "| default gpu_memory_utilization | 0.92 (0.27+), else 0.9 | as listed | the v0.27.1 and "
    "v0.31.0 logs of the reference | none |",
    "| Mamba state pages per request | 2 (align mode, prefix caching on) | 0.31 and later "
    "(earlier versions not read: 1) | vLLM 0.31.0 wheel | none |",
    "| SGLang mem_fraction_static default | 0.88/0.87/0.85/0.81/0.79 by TP size; from 0.5 "
    "the reserved-memory formula | before 0.5; 0.5 and later | SGLang 0.4 server_args.py; "
    "reference §3 | none |",
    "| SGLang free memory before load | total − 0.38 GiB (context), and at TP ≥ 2 − 2.01 GiB "
    "of distributed init on NVSwitch servers, − 0.48 GiB on PCIe cards | all | the SGLang "
    "docs log; sglang issue #4760 (4 × L4); sgl-project/sglang PR #11716 (8 × H200, "
    '"Init torch distributed ends. mem usage=2.01 GB") | 0.38: case-099; 0.48: case-064; '
    "2.01: PR #11716, a log that is not a case, read after case-094's miss was known, so "
    "case-094 (held out, no constant set from it) is no longer a blind test |",
    "",
    "Not fitted either: what each rank loads beyond its checkpoint share (rotary cos/sin "
    "tables as vLLM's scaling classes build them, MoE router, k/v projections replicated "
    "when TP exceeds the KV heads) and the page layout (unified page sizes, hybrid block "
    "alignment), read from vLLM's code.",
    "",
]


class Command(SizingCommand):
    help = "Compare the calibrated KV-pool model with measured engine start-up logs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--kind",
            choices=("kv", "ttft", "traffic"),
            default="kv",
            help="kv: KV pools from engine start-up logs; ttft: time to first token; "
            "traffic: hit rates and throughput of multi-turn workloads",
        )
        parser.add_argument("--cases", required=True, help="JSON file of ground-truth cases")
        parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["kind"] == "traffic":
            cases = _load_cases(options["cases"])
            self.stdout.write(traffic_accuracy.report(cases, options["format"], options["cases"]))
            return
        if options["kind"] == "ttft":
            cases = _load_cases(options["cases"])
            self.stdout.write(ttft_accuracy.report(cases, options["format"], options["cases"]))
            return
        results, summary = evaluate(_load_cases(options["cases"]))
        fmt = options["format"]
        if fmt == "json":
            payload = {"cases": [r.as_dict() for r in results], "summary": summary}
            self.stdout.write(json.dumps(payload, indent=2))
        elif fmt == "markdown":
            self.stdout.write(self._markdown(results, summary, options["cases"]))
        else:
            widths = [
                max(len(h), *(len(row[i]) for row in _rows(results))) for i, h in enumerate(HEADERS)
            ]
            for row in [HEADERS, *_rows(results)]:
                self.stdout.write(
                    "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                )
            self.stdout.write("")
            for line in _summary_lines(summary):
                self.stdout.write(line)

    @staticmethod
    def _markdown(results: list[CaseResult], summary: dict[str, Any], path: str) -> str:
        out = [
            "# Accuracy of the calibrated KV-pool model",
            "",
            f"Generated by `make accuracy` (`manage.py accuracy --cases {path} --format "
            "markdown`). Each case is predicted from inputs known before the engine starts; "
            "the measured figures come from the engine's start-up log. Errors are in % of "
            "the measured KV pool per GPU; percentiles are nearest-rank. How the model works: "
            "[architectures.md](architectures.md) and `sizing/memory/calibrated/`.",
            "",
            "## Summary",
            "",
            *[f"- {line}" for line in _summary_lines(summary)],
            "",
            *METHOD_NOTES,
            *_miss_lines(results),
            "## Cases",
            "",
            "| " + " | ".join(HEADERS) + " |",
            "|" + "|".join("---" for _ in HEADERS) + "|",
        ]
        out += [
            "| " + " | ".join(cell.replace("|", "/") for cell in row) + " |"
            for row in _rows(results)
        ]
        return "\n".join(out) + "\n"
