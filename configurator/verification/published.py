"""The plan's reload-versus-recompute estimate against the published TTFT reduction.

Pure Python (no Django). Source: the vLLM team measured 2× to 22× lower TTFT when KV
values are loaded from CPU memory instead of recomputed, for Llama 3.1 8B on an H100
80 GB, depending on prompt size (vLLM blog, 8 January 2026, quoted in the sizing article).
The comparison never counts toward a report's status: for that model on that GPU class
it is in-sample, since the prefill and CPU-reload constants of ``sizing.performance`` were
fitted on the same blog's TTFT sweep, whose speedups are the published range
(``docs/accuracy.md``); for any other plan it was not measured on that setup
(``docs/verification.md``, "Which checks count"). It is shown, informational, with the
reason.
"""

from __future__ import annotations

from configurator.verification.comparison import CheckResult

PUBLISHED_TTFT_SPEEDUP = (2.0, 22.0)
PUBLISHED_TTFT_SOURCE = (
    "vLLM blog, 8 January 2026: loading KV values from CPU memory lowers TTFT 2× to 22× "
    "depending on prompt size (Llama 3.1 8B, H100 80 GB; quoted in the sizing article)"
)
PUBLISHED_TTFT_MODELS = frozenset(
    {
        "meta-llama/llama-3.1-8b",
        "meta-llama/llama-3.1-8b-instruct",
        "meta-llama/meta-llama-3.1-8b",
        "meta-llama/meta-llama-3.1-8b-instruct",
    }
)
"""Repositories of the model the published TTFT range was measured on."""
PUBLISHED_TTFT_GPU_CLASS = "h100"
PUBLISHED_TTFT_NOT_COUNTED = (
    "the published range was measured for Llama 3.1 8B on an H100 80 GB, not for this model and GPU"
)
PUBLISHED_TTFT_IN_SAMPLE = (
    "the prefill and reload constants of the plan were fitted on the same vLLM blog "
    "measurements, so agreement is not an independent check"
)


def reload_check(
    *, reload_ms: float, recompute_ms: float, model_id: str = "", gpu: str = ""
) -> CheckResult | None:
    """The plan's recompute/reload ratio against the published TTFT reduction range.

    Args:
        reload_ms: a returning user's TTFT from the CPU tier in the plan, ms
            (:attr:`sizing.performance.hit_value.TransferEstimate.cpu_hit_ms`).
        recompute_ms: the plan's TTFT of a full prefill, ms.
        model_id: the plan's model; with ``gpu`` decides whether the check counts.
        gpu: the plan's GPU class (:func:`gpu_class`).

    Returns:
        ``None`` without both times. The check is informational, with the reason in its
        note: for the published model (:data:`PUBLISHED_TTFT_MODELS`) on an H100 it is
        in-sample (:data:`PUBLISHED_TTFT_IN_SAMPLE`), for any other plan it was not
        measured on that setup (:data:`PUBLISHED_TTFT_NOT_COUNTED`).
    """
    if reload_ms <= 0 or recompute_ms <= 0:
        return None
    ratio = recompute_ms / reload_ms
    low, high = PUBLISHED_TTFT_SPEEDUP
    nearest = min(max(ratio, low), high)
    deviation = (ratio - nearest) / nearest
    # Inside the published range is agreement; a factor of two outside is tolerated,
    # since the measurement is for another model and GPU.
    if deviation == 0:
        status = "verified"
    elif low / 2 <= ratio <= high * 2:
        status = "within_tolerance"
    else:
        status = "deviates"
    comparable = (
        model_id.strip().lower() in PUBLISHED_TTFT_MODELS and gpu == PUBLISHED_TTFT_GPU_CLASS
    )
    return CheckResult(
        counted=False,
        note=PUBLISHED_TTFT_IN_SAMPLE if comparable else PUBLISHED_TTFT_NOT_COUNTED,
        name="Reload vs. recompute (TTFT reduction from CPU hits)",
        quantity="ttft_speedup",
        unit="×",
        predicted=ratio,
        measured=nearest,
        deviation=deviation,
        tolerance=1.0,
        status=status,
        source=PUBLISHED_TTFT_SOURCE,
    )
