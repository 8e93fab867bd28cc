"""What a hit is worth: a returning user's time to first token on a miss, a CPU-tier hit
and a GPU prefix hit, term by term (``sizing.performance.hit_value``, ``sizing.performance``)."""

from __future__ import annotations

from functools import lru_cache

from django.utils.translation import gettext_noop as _noop
from django.utils.translation import override

from configurator.inquiries import measurements
from configurator.inquiries.explain.words import Figure, Words
from sizing.performance.ttft import HitTime
from sizing.plan.orchestrator import Plan

NO_TIER_BASIS = {
    "gpu": _noop(
        "not claimed: no measured basis for hits from the GPU prefix cache with %(engine)s"
    ),
    "cpu": _noop("not claimed: no measured basis for hits from the CPU tier with %(engine)s"),
    "nvme": _noop("not claimed: no measured basis for hits from the NVMe tier with %(engine)s"),
    "shared": _noop("not claimed: no measured basis for hits from the shared tier with %(engine)s"),
}
"""The page's sentence for a tier the engine has no measured path from (msgids)."""
ENGINE_NAMES = {
    "vllm": _noop("vLLM native offloading"),
    "lmcache": "LMCache",
    "sglang": "SGLang HiCache",
    "dynamo": "Dynamo KVBM",
}


def _unclaimed(plan: Plan, w: Words) -> list[str]:
    """What the figure does not claim: tiers without a measured path, a prefill
    efficiency estimated from another card (with its band,
    :attr:`~sizing.performance.calibration.Basis.band_pct`)."""
    _ = w.gettext
    t = plan.transfer
    out = []
    if t.basis is not None and t.basis.band_pct is not None:
        out.append(
            _(
                "estimated: no prefill measurement on %(gpu)s; the efficiencies measured on "
                "the nearest card of its architecture are applied to its datasheet rates, so "
                "its times may lie %(band)s %% either way"
            )
            % {"gpu": plan.gpu.name, "band": w.num(t.basis.band_pct)}
        )
    if t.returning is not None:
        engine = _(ENGINE_NAMES[t.returning.engine])
        out += [
            _(NO_TIER_BASIS[h.tier]) % {"engine": engine} for h in t.returning.hits if h.hit is None
        ]
    return out


@lru_cache(maxsize=256)
def _sources(language: str, ids: tuple[str, ...]) -> str:
    """The measurements ``ids`` in ``language``, joined by semicolons
    (:func:`~configurator.inquiries.measurements.titles`), once per language and ids."""
    with override(language):
        return "; ".join(measurements.titles(ids))


def _signed(value: float, w: Words) -> str:
    """``value`` with one decimal and a typographic minus."""
    return w.num(value, 1).replace("-", "−")


def _miss_line(plan: Plan, w: Words) -> str:
    """A miss's TTFT as the sum of its terms (:class:`~sizing.performance.prefill.
    PrefillTime`): a memory-bound prefill shows the weights read instead of the multiplies."""
    _, num = w.gettext, w.num
    r = plan.transfer.returning
    assert r is not None
    values = {
        "tokens": num(r.context_tokens),
        "fe": num(r.frontend_ms, 1),
        "fixed": num(r.miss.fixed_ms, 1),
        "linear": num(r.miss.linear_ms, 1),
        "attn": num(r.miss.attention_ms, 1),
        "read": num(r.miss.weights_read_ms, 1),
        "comm": num(r.miss.communication_ms, 1),
        "tp": num(plan.parallelism.tensor_parallel_size),
        "ms": num(r.miss_ms, 1),
    }
    if r.miss.compute_bound:
        return (
            _(
                "miss: tokenize %(tokens)s tokens (%(fe)s ms) + prefill: fixed %(fixed)s ms + "
                "weight multiplies %(linear)s ms + attention %(attn)s ms + TP communication "
                "%(comm)s ms at TP %(tp)s = %(ms)s ms"
            )
            % values
        )
    return (
        _(
            "miss: tokenize %(tokens)s tokens (%(fe)s ms) + prefill: fixed %(fixed)s ms + "
            "reading the weights %(read)s ms (longer than the multiplies and attention) + "
            "TP communication %(comm)s ms at TP %(tp)s = %(ms)s ms"
        )
        % values
    )


def _hit_terms(hit: HitTime, new_tokens: int, w: Words, reload_term: str = "") -> str:
    """The terms a hit's TTFT is made of, joined by " + " (:func:`sizing.performance.ttft.
    ttft_hit`: tokenization + reload + the path's fitted hit correction + the prefill of
    the new tokens); a zero reload or correction is left out."""
    _, num = w.gettext, w.num
    terms = [reload_term] if reload_term else []
    if not reload_term and hit.reload.total_ms:
        terms.append(_("reload (%(ms)s ms)") % {"ms": num(hit.reload.total_ms, 1)})
    if hit.correction_ms:
        terms.append(
            _("the fitted per-request correction of a hit (%(ms)s ms)")
            % {"ms": _signed(hit.correction_ms, w)}
        )
    terms.append(
        _(
            "prefill of the %(new)s new tokens of the turn (the last answer and the new "
            "prompt) (%(ms)s ms)"
        )
        % {"new": num(new_tokens), "ms": num(hit.prefill.total_ms, 1)}
    )
    terms.append(_("tokenization (%(ms)s ms)") % {"ms": num(hit.frontend_ms, 1)})
    return " + ".join(terms)


def transfer_figure(plan: Plan, w: Words) -> Figure:
    """A returning user's time to first token: miss, CPU-tier hit, GPU prefix hit
    (``sizing.performance.hit_value``, ``sizing.performance``)."""
    _, num = w.gettext, w.num
    t = plan.transfer
    r = t.returning
    label = _("What a hit is worth")
    if r is None or t.reload_ms is None or t.recompute_ms is None:
        return Figure(
            key="transfer",
            label=label,
            value=_("no measured basis for prefill on %(gpu)s") % {"gpu": plan.gpu.name},
            detail=_("no timing is claimed for this GPU"),
            steps=(),
            source=_("performance model calibration (docs/accuracy.md)"),
        )
    cpu, gpu_hit = r.tier("cpu"), r.tier("gpu")
    steps = [_miss_line(plan, w)]
    if cpu.hit is not None:
        rl = cpu.hit.reload
        reload_term = _(
            "reload %(cached)s tokens (%(gib)s GiB per GPU, %(ms_r)s ms, %(gbs)s GB/s effective)"
        ) % {
            "cached": num(r.context_tokens - r.new_tokens),
            "gib": num(rl.bytes_per_rank / 2**30, 2),
            "ms_r": num(rl.total_ms, 1),
            "gbs": num(rl.effective_gbs, 1),
        }
        steps.append(
            _("CPU-tier hit: %(terms)s = %(ms)s ms")
            % {
                "terms": _hit_terms(cpu.hit, r.new_tokens, w, reload_term),
                "ms": num(cpu.hit.ttft_ms, 1),
            }
        )
    if gpu_hit.hit is not None:
        steps.append(
            _("GPU prefix-cache hit: %(terms)s = %(ms)s ms")
            % {"terms": _hit_terms(gpu_hit.hit, r.new_tokens, w), "ms": num(gpu_hit.hit.ttft_ms, 1)}
        )
    steps.append(
        _(
            "the conversation's own tokens: reload %(reload)s ms against %(recompute)s ms "
            "to recompute"
        )
        % {"reload": num(t.reload_ms, 1), "recompute": num(t.recompute_ms)}
    )
    steps += _unclaimed(plan, w)
    sources = _sources(w.language, t.basis.sources) if t.basis else ""
    return Figure(
        key="transfer",
        label=label,
        value=_("%(hit)s ms from the CPU tier against %(miss)s ms for a full prefill")
        % {"hit": num(cpu.ttft_ms or 0.0), "miss": num(r.miss_ms)},
        detail=_("a returning user's first token comes %(x)s× sooner")
        % {"x": num(cpu.speedup or 0.0, 1)},
        steps=tuple(steps),
        source=sources or _("performance model calibration (docs/accuracy.md)"),
    )
