"""Pipeline stages' cache bytes from running totals equal the bytes of the stage's layers.

The parallelism search sizes each stage of every (TP, PP) candidate from running totals
over the layers (``sizing.memory.stage_cache``); the reference here is :func:`conversation_bytes`
and
:func:`kv_bytes_per_token` applied to the stage's own layers, split as vLLM's
``get_pp_indices`` does (:func:`sizing.layout.parallelism.pipeline_stages`). Models cover growing
full attention (Llama 3.1 405B), MLA (DeepSeek-V3), sliding windows (Gemma 3) and
recurrent states beside attention (Qwen3-Next, Falcon-H1).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing.layout.parallelism import pipeline_stages
from sizing.memory.stage_cache import ConversationShape, layer_sums, stage_cache_gib
from sizing.model.architecture import conversation_bytes, kv_bytes_per_token
from sizing.model.spec import from_catalog
from sizing.units import GIB

MODELS = [
    "meta-llama/Llama-3.1-405B-Instruct",
    "deepseek-ai/DeepSeek-V3",
    "google/gemma-3-27b-it",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "tiiuae/Falcon-H1-0.5B-Base",
]


@pytest.mark.parametrize("repo_id", MODELS)
@pytest.mark.parametrize("kv_dtype", ["fp8", "auto"])
def test_stage_bytes_match_the_stage_layers(repo_id: str, kv_dtype: str) -> None:
    arch = from_catalog(repo_id).architecture
    work = ConversationShape(kv_dtype=kv_dtype, context_tokens=8192, shared_prefix_tokens=1500)
    for tp in (1, 2, 4, 8):
        sums = layer_sums(arch, work, tp)
        for pp in range(1, 7):
            got = stage_cache_gib(sums, arch.num_layers, pp)
            want = []
            for start, end in pipeline_stages(arch.num_layers, pp):
                stage = replace(arch, layers=arch.layers[start:end])
                whole = conversation_bytes(stage, kv_dtype, 8192, tp)
                prefix = kv_bytes_per_token(stage, kv_dtype, tp) * 1500
                want.append(((whole - prefix) / GIB, prefix / GIB))
            assert got == want, (tp, pp)
