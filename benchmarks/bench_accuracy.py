"""Accuracy of the calibrated KV-pool model on the bundled ground-truth cases, and the
time one prediction takes."""

from __future__ import annotations

import json
from importlib import resources

from benchmarks.run import Result
from benchmarks.timing import cpu_samples
from sizing.memory.calibrated import EngineSetup, predict
from sizing.memory.calibrated.accuracy import evaluate
from sizing.model.spec import from_catalog


def run() -> list[Result]:
    text = resources.files("sizing").joinpath("data/ground_truth_cases.json").read_text("utf-8")
    _, summary = evaluate(json.loads(text)["cases"])
    vllm = summary["by_engine"]["vllm"]
    sglang = summary["by_engine"].get("sglang", {})
    model = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    setup = EngineSetup("vllm", "0.19.0", 79.19, 8192, gpu_memory_utilization=0.95)
    median_ms = cpu_samples(lambda: predict(model, setup), 500).median
    return [
        Result(
            "calibrated",
            "vLLM KV pool, median |error|",
            f"{vllm['median_abs_error_pct']} %",
            "<= 2 %",
            vllm["median_abs_error_pct"] <= 2,
        ),
        Result(
            "calibrated",
            "vLLM KV pool, p90 |error|",
            f"{vllm['p90_abs_error_pct']} %",
            "<= 5 %",
            vllm["p90_abs_error_pct"] <= 5,
        ),
        Result(
            "calibrated",
            "SGLang KV pool, median |error|",
            f"{sglang.get('median_abs_error_pct')} %",
            "<= 5 %",
            (sglang.get("median_abs_error_pct") or 99) <= 5,
        ),
        Result(
            "calibrated",
            "cases evaluated",
            f"{summary['evaluated_share_pct']} %",
            ">= 90 %",
            summary["evaluated_share_pct"] >= 90,
        ),
        Result(
            "calibrated",
            "one prediction, CPU (median)",
            f"{median_ms:.3f} ms",
            "< 5 ms",
            median_ms < 5,
        ),
    ]
