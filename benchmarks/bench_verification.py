"""Verification: parsing a 10,000-line engine log (target < 1 s) and the checks of a
typical quote (target: report < 3 s end to end with a worker; measured here is the job's
work without queue and database: selecting records, calibrated predictions, comparisons).
"""

from __future__ import annotations

import statistics
import time

from benchmarks.run import Result
from benchmarks.seed import SEED_INPUTS
from configurator.planning.services import plan_stored
from configurator.verification.models import BenchmarkRecord
from configurator.verification.parsers import parse_vllm_log
from configurator.verification.records import _values, bundled_cases
from configurator.verification.services import plan_checks

NOISE = (
    "(EngineCore pid=241) DEBUG 04-22 00:48:26 [v1/worker/gpu_model_runner.py:5342] "
    "ubatch_slices: None, ubatch_slices_padded: None"
)
KEY_LINES = [
    "(EngineCore pid=241) INFO 04-22 00:47:53 [v1/engine/core.py:105] Initializing a V1 LLM "
    "engine (v0.19.0) with config: model='ibm-granite/granite-3.1-2b-instruct', "
    "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, pipeline_parallel_size=1, "
    "data_parallel_size=1, quantization=None, kv_cache_dtype=auto",
    "(EngineCore pid=241) INFO 04-22 00:48:00 [v1/worker/gpu_model_runner.py:4821] Model "
    "loading took 4.74 GiB memory and 4.512 seconds",
    "(EngineCore pid=241) INFO 04-22 00:48:21 [v1/worker/gpu_worker.py:436] Available KV "
    "cache memory: 69.28 GiB",
    "(EngineCore pid=241) INFO 04-22 00:48:21 [v1/core/kv_cache_utils.py:1316] GPU KV cache "
    "size: 908,048 tokens",
]


def _log(lines: int) -> str:
    body = [NOISE] * (lines - len(KEY_LINES))
    step = len(body) // len(KEY_LINES)
    for i, line in enumerate(KEY_LINES):
        body.insert(i * step, line)
    return "\n".join(body)


def run() -> list[Result]:
    text = _log(10_000)
    samples = []
    for _ in range(20):
        start = time.process_time()  # CPU time: the machine is shared (benchmarks.timing)
        parse_vllm_log(text, gpu_type="H100 80GB")
        samples.append(time.process_time() - start)
    parse_s = statistics.median(samples)

    records = [BenchmarkRecord(**_values(case)) for case in bundled_cases()]
    inputs = {**SEED_INPUTS, "new_conversations_per_day": 0}
    job = []
    for _ in range(10):
        start = time.process_time()
        plan_checks(plan_stored(inputs), records=records)
        job.append(time.process_time() - start)
    job_s = statistics.median(job)
    return [
        Result(
            "verification",
            "parse a 10,000-line vLLM log, CPU (median)",
            f"{parse_s * 1e3:.1f} ms",
            "< 1 s",
            parse_s < 1,
        ),
        Result(
            "verification",
            "checks of the seed quote, no queue/DB, CPU (median)",
            f"{job_s * 1e3:.1f} ms",
            "< 3 s end to end",
            job_s < 3,
        ),
    ]
