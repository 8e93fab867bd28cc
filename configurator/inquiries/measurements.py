"""What each published measurement behind the timing figures is, in the reader's language.

The performance model names the measurements a figure rests on by id
(:attr:`sizing.performance.Basis.sources`, ``sizing/data/performance.json``
"measurements"); the page and the PDF show these descriptions instead. Dates are ISO,
addresses are given as found, so the sentences translate without English words.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _noop

from sizing.performance.calibration import citation

TITLES = {
    "vllm-blog-ttft-sweep": _noop(
        "vLLM blog 2026-01-08, figure 1: time to first token of a miss and of a CPU hit on one "
        "H100 (blog.vllm.ai/2026/01/08/kv-offloading-connector.html)"
    ),
    "vllm-blog-dma-microbench": _noop(
        "vLLM blog 2026-01-08, figures 3–4: copy rate into the GPU against the block size"
    ),
    "vllm-blog-llama1b": _noop(
        "vLLM blog 2026-01-08, figure 5: time to first token of a CPU hit with a small model"
    ),
    "agentic-kvc-h20-tiers": _noop(
        "measured 2026-05-30 on one H20: time to first token from each tier "
        "(gitea.gahow.org/gahow/agentic-kvc)"
    ),
    "prefill-rtx-pro-6000": _noop(
        "measured 2026-08-25: prefill rates on one RTX PRO 6000 "
        "(github.com/local-inference-lab/rtx6kpro/issues/81)"
    ),
    "lmcache-1740-cpu-retrieve": _noop(
        "LMCache's log of a CPU-tier retrieve, 2025-10 (github.com/LMCache/LMCache/pull/1740)"
    ),
    "sglang-26305-minimax-m27": _noop(
        "SGLang HiCache with a file store (github.com/sgl-project/sglang/issues/26305)"
    ),
    "sglang-eic-dsv4-h20": _noop(
        "SGLang HiCache with a remote KV store on 8 × H20, 2026-09-12 "
        "(github.com/sgl-project/sglang benchmark/hicache/eic_snapshots)"
    ),
}
"""Each measurement id's description (English msgid; German in ``configurator/locale``)."""


def titles(ids: Iterable[str]) -> list[str]:
    """The descriptions of ``ids`` in the active language (an unknown id: its citation)."""
    return [gettext(TITLES[i]) if i in TITLES else citation(i) for i in ids]
