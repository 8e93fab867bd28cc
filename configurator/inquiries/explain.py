"""The estimate as the customer reads it: each figure with its calculation and source.

This module does not size anything; it restates what :mod:`sizing.plan` computed, with
the customer's numbers filled into the formula of each rule, formatted for the active
language (``1.152 GB`` in German, ``1,152 GB`` in English). The rules and their sources
live in the ``sizing`` modules named in each :class:`Figure`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from django.utils.translation import get_language, ngettext, override
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop as _noop

from configurator.inquiries import measurements
from configurator.numbers import grouped, separators
from sizing.architecture import GROWING_KINDS, LayerKind
from sizing.performance.ttft import HitTime
from sizing.plan import Plan
from sizing.units import GB, GIB


@cache
def _translated(language: str, message: str) -> str:
    with override(language):
        return _(message)


@dataclass(frozen=True)
class Words:
    """Numbers and fixed phrases in one language, looked up once per language.

    The estimate's figures format about ninety numbers and translate about seventy
    phrases per keystroke; asking Django for the active language each time costs more
    than the figures themselves. The phrases are the literal messages of this module,
    so the cache holds one entry per message and language.

    Attributes:
        language: a language code of ``settings.LANGUAGES``.
        decimal: its decimal separator.
        thousands: its thousands separator.
    """

    language: str
    decimal: str
    thousands: str

    def num(self, value: float, decimals: int = 0) -> str:
        """``value`` as :func:`num` formats it in :attr:`language`."""
        return grouped(value, decimals, self.decimal, self.thousands)

    def gettext(self, message: str) -> str:
        """``message`` translated into :attr:`language` (Django's ``gettext``)."""
        return _translated(self.language, message)


@cache
def words(language: str) -> Words:
    """The :class:`Words` of ``language``."""
    return Words(language, *separators(language))


@dataclass(frozen=True)
class Figure:
    """One figure of the estimate.

    Attributes:
        key: stable id (used for element ids and tests).
        label: what the figure is.
        value: the figure with its unit, formatted.
        detail: one short line under the value, or empty.
        steps: the calculation, one line per step, numbers filled in.
        source: where the rule comes from.
    """

    key: str
    label: str
    value: str
    detail: str
    steps: tuple[str, ...]
    source: str


def kv_figure(plan: Plan, w: Words) -> Figure:
    """KV bytes per token and per conversation (``sizing.architecture``)."""
    _, num = w.gettext, w.num
    arch = plan.request.model.architecture
    ctx = plan.request.workload.context_tokens
    growing = [layer for layer in arch.layers if layer.kind in GROWING_KINDS]
    first = growing[0] if growing else None
    uniform = (
        first is not None
        and first.kind is LayerKind.FULL
        and len(growing) == len(arch.layers)
        and growing.count(first) == len(growing)
    )
    steps = []
    if uniform and first is not None:
        per_value = plan.kv_bytes_per_token // max(1, len(growing) * first.values_per_token())
        steps.append(
            _(
                "per token: 2 (key and value) × %(layers)s layers × %(heads)s KV heads × "
                "%(dim)s values per head × %(bytes)s B = %(total)s B"
            )
            % {
                "layers": num(len(growing)),
                "heads": num(first.kv_heads),
                "dim": num(first.k_head_dim),
                "bytes": num(per_value),
                "total": num(plan.kv_bytes_per_token),
            }
        )
    else:
        steps.append(
            _(
                "per token: sum over the %(n)s layers whose cache grows with the context "
                "(full attention, MLA) = %(total)s B; windowed layers keep at most their "
                "window, linear and Mamba layers a fixed state"
            )
            % {"n": num(len(growing)), "total": num(plan.kv_bytes_per_token)}
        )
    steps.append(
        _("per conversation: %(ctx)s tokens → %(bytes)s B = %(gib)s GiB")
        % {
            "ctx": num(ctx),
            "bytes": num(plan.conversation_bytes),
            "gib": num(plan.conversation_gib, 2),
        }
    )
    return Figure(
        key="kv",
        label=_("KV cache per conversation"),
        value=f"{num(plan.conversation_gib, 2)} GiB",
        detail=_("%(bytes)s B per token, %(dtype)s cache")
        % {"bytes": num(plan.kv_bytes_per_token), "dtype": plan.request.workload.kv_dtype.upper()},
        steps=tuple(steps),
        source=_(
            "the model's config.json on the Hugging Face Hub (layers, KV heads, head size); "
            "vLLM source, vllm/v1/kv_cache_interface.py (cache bytes per layer)"
        ),
    )


def gpu_figure(plan: Plan, w: Words) -> Figure:
    """GPUs, nodes, replicas and the KV budget per card (``sizing.gpu``)."""
    _, num = w.gettext, w.num
    p = plan.parallelism
    rule = plan.request.rule
    return Figure(
        key="gpus",
        label=_("GPUs, nodes and replicas"),
        value=_("%(replicas)s replicas × %(tp)s GPU")
        % {"replicas": num(p.total_replicas), "tp": num(p.tensor_parallel_size)},
        detail=ngettext(
            "%(gpus)s × %(name)s in %(nodes)s node, tensor parallel %(tp)s",
            "%(gpus)s × %(name)s in %(nodes)s nodes, tensor parallel %(tp)s",
            p.nodes,
        )
        % {
            "gpus": num(p.gpus),
            "name": plan.gpu.name,
            "nodes": num(p.nodes),
            "tp": num(p.tensor_parallel_size),
        },
        steps=(
            _(
                "KV cache per card = %(util)s × %(reported)s GiB − %(overhead)s GiB − "
                "%(weights)s GiB weights / %(tp)s = %(budget)s GiB"
            )
            % {
                "util": num(rule.utilization, 2),
                "reported": num(plan.gpu.reported_gib, 2),
                "overhead": num(rule.overhead_gib, 1),
                "weights": num(plan.weights_gib, 1),
                "tp": num(p.tensor_parallel_size),
                "budget": num(p.kv_cache_gib_per_gpu, 1),
            },
            (
                _(
                    "tensor parallel size: the smallest that holds the weights and one "
                    "full-length conversation; replicas per node = %(n)s GPUs / %(tp)s = "
                    "%(replicas)s"
                )
                if plan.request.workload.tensor_parallel_size is None
                else _(
                    "tensor parallel size: as given; replicas per node = %(n)s GPUs / %(tp)s = "
                    "%(replicas)s"
                )
            )
            % {
                "n": num(plan.request.workload.gpus_per_node),
                "tp": num(p.tensor_parallel_size),
                "replicas": num(p.replicas),
            },
            *_scale_steps(plan, w),
        ),
        source=_(
            "our planning rule (0.9 × the memory the driver reports, vLLM's "
            "--gpu-memory-utilization default, less 3 GiB for CUDA graphs and activations); "
            "vLLM documentation, parallelism and scaling"
        ),
    )


def _scale_steps(plan: Plan, w: Words) -> list[str]:
    """How traffic sets the replicas and nodes (``sizing.scale.scale``,
    ``sizing.cluster.plan_cluster``): the larger of what memory and compute need, on
    whole nodes; empty without traffic."""
    _, num = w.gettext, w.num
    serving = plan.serving
    if serving is None:
        return []
    scale, cluster = serving.scale, serving.cluster
    compute = scale.replicas_for_compute
    needed = max(scale.replicas_for_memory, compute or 0)
    if compute is None:
        need = _("replicas: %(memory)s for memory; no replica count meets the targets") % {
            "memory": num(scale.replicas_for_memory)
        }
    else:
        need = _(
            "replicas needed = max(%(memory)s for memory, %(compute)s for the load) = %(needed)s"
        ) % {
            "memory": num(scale.replicas_for_memory),
            "compute": num(compute),
            "needed": num(needed),
        }
    groups = cluster.nodes // cluster.pipeline_nodes
    values = {
        "needed": num(needed),
        "per_node": num(cluster.replicas_per_node),
        "pp": num(cluster.pipeline_nodes),
        "nodes": num(cluster.nodes),
        "groups": num(groups),
        "replicas": num(cluster.replicas),
    }
    if math.ceil(needed / cluster.replicas_per_node) != groups:
        nodes = _(
            "nodes: %(nodes)s, the fewest the plan allows; replicas = %(groups)s × "
            "%(per_node)s per node = %(replicas)s"
        )
    elif cluster.pipeline_nodes == 1:
        nodes = _(
            "nodes = ⌈%(needed)s / %(per_node)s replicas per node⌉ = %(nodes)s; "
            "replicas = %(nodes)s × %(per_node)s = %(replicas)s"
        )
    else:
        nodes = _(
            "nodes = ⌈%(needed)s / %(per_node)s replicas per node⌉ × %(pp)s nodes per "
            "replica = %(nodes)s; replicas = %(groups)s × %(per_node)s = %(replicas)s"
        )
    return [need, nodes % values]


def resident_figure(plan: Plan, w: Words) -> Figure:
    """Conversations resident on the GPUs and those resting (``sizing.gpu``)."""
    _, num = w.gettext, w.num
    p = plan.parallelism
    per_rank_gib = plan.conversation_gib / p.tensor_parallel_size
    return Figure(
        key="resident",
        label=_("Conversations on the GPUs"),
        value=num(p.conversations_on_gpus),
        detail=_("%(per_gpu)s per GPU; %(resting)s of %(users)s rest between turns")
        % {
            "per_gpu": num(p.conversations_per_gpu, 0 if p.tensor_parallel_size == 1 else 1),
            "resting": num(plan.resting_conversations),
            "users": num(plan.request.workload.users),
        },
        steps=(
            _("per replica: ⌊%(budget)s GiB × %(tp)s / %(conv)s GiB⌋ = %(n)s conversations")
            % {
                "budget": num(p.kv_cache_gib_per_gpu, 1),
                "tp": num(p.tensor_parallel_size),
                "conv": num(per_rank_gib * p.tensor_parallel_size, 2),
                "n": num(p.conversations_per_replica),
            },
            _("on the GPUs: %(n)s × %(replicas)s replicas = %(total)s")
            % {
                "n": num(p.conversations_per_replica),
                "replicas": num(p.total_replicas),
                "total": num(p.conversations_on_gpus),
            },
            _("resting: %(users)s users − %(total)s = %(resting)s")
            % {
                "users": num(plan.request.workload.users),
                "total": num(p.conversations_on_gpus),
                "resting": num(plan.resting_conversations),
            },
        ),
        source=_("our planning rule: whole conversations per replica"),
    )


def cpu_figure(plan: Plan, w: Words) -> Figure:
    """The CPU-memory tier (``sizing.host_memory.cpu_tier``) and the vLLM flag."""
    _, num = w.gettext, w.num
    tier = plan.cpu_tier
    if tier.total_gib == 0:
        return Figure(
            key="cpu",
            label=_("CPU-memory tier"),
            value=_("none"),
            detail=_("every conversation fits on the GPUs"),
            steps=(_("no conversation rests outside the GPUs, so no tier is sold"),),
            source=_("our planning rule: no tier when every conversation fits on the GPUs"),
        )
    par = plan.parallelism
    steps = [
        _(
            "per engine instance: %(n)s conversations (%(users)s users / %(instances)s, "
            "rounded up) × %(conv)s GiB as its ranks store them = %(per)s GiB"
        )
        % {
            "n": num(tier.conversations_per_instance),
            "users": num(plan.request.workload.users),
            "instances": num(par.total_replicas),
            "conv": num(tier.ranks.stored_conversation_bytes / GIB, 4),
            "per": num(tier.per_instance_gib, 1),
        },
        _("× %(instances)s instances = %(gib)s GiB = %(gb)s GB")
        % {
            "instances": num(par.total_replicas),
            "gib": num(tier.total_gib, 1),
            "gb": num(tier.total_gb, 1),
        },
        _("the GPU cache of an instance has room for %(room)s conversations")
        % {"room": num(tier.gpu_conversation_capacity, 1)},
    ]
    if plan.shared_prompt_bytes:
        steps.insert(1, _("plus the shared system prompt once per instance"))
    if plan.vllm_offload:
        steps.append(
            _("vLLM: --kv-offloading-size %(size)s (GiB), cpu_bytes_to_use %(bytes)s")
            % {
                "size": plan.vllm_offload.kv_offloading_size_gib,
                "bytes": num(plan.vllm_offload.cpu_bytes_to_use),
            }
        )
    return Figure(
        key="cpu",
        label=_("CPU-memory tier"),
        value=f"{num(tier.total_gib)} GiB ≈ {num(tier.total_gb)} GB",
        detail=_("%(per)s GiB pinned per engine instance") % {"per": num(tier.per_instance_gib)},
        steps=tuple(steps),
        source=_(
            "our planning rule (every user's conversation kept warm); vLLM documentation, "
            "--kv-offloading-size (GiB, total over the instance's GPUs)"
        ),
    )


def host_figure(plan: Plan, w: Words) -> Figure:
    """Host memory and the DIMM layout per socket (``sizing.host_memory.host_memory``)."""
    _, num = w.gettext, w.num
    host = plan.host
    gpu_gb = host.baseline_gb / 2
    if host.buffer_gb > 0:
        need = _("need = max(2 × %(gpu)s GB, %(buf)s GB buffer + %(gpu)s GB) = %(need)s GB") % {
            "gpu": num(gpu_gb),
            "buf": num(host.buffer_gb),
            "need": num(host.need_gb),
        }
    else:
        need = _("need = 2 × %(gpu)s GB GPU memory = %(need)s GB (no-offload baseline)") % {
            "gpu": num(gpu_gb),
            "need": num(host.need_gb),
        }
    return Figure(
        key="host",
        label=_("Host memory"),
        value=(
            _("%(n)s × %(size)s GB = %(total)s GB per node")
            if plan.parallelism.nodes > 1
            else "%(n)s × %(size)s GB = %(total)s GB"
        )
        % {"n": num(host.dimm_count), "size": num(host.dimm_gb), "total": num(host.total_gb)},
        detail=_("per socket: %(n)s × %(size)s GB = %(gb)s GB, %(dpc)s DIMM per channel")
        % {
            "n": num(host.dimms_per_socket),
            "size": num(host.dimm_gb),
            "gb": num(host.gb_per_socket),
            "dpc": num(host.dimms_per_channel),
        },
        steps=(
            need,
            _(
                "smallest balanced layout: %(n)s × %(size)s GB = %(total)s GB, "
                "%(free)s GB beside the pinned buffer"
            )
            % {
                "n": num(host.dimm_count),
                "size": num(host.dimm_gb),
                "total": num(host.total_gb),
                "free": num(host.free_after_buffer_gb),
            },
        ),
        source=_(
            "our planning rule (twice the GPU memory, or the buffer plus the GPU memory); "
            "Dell and Cisco memory population guides (the same DIMM in every channel)"
        ),
    )


def nvme_figure(plan: Plan, w: Words) -> Figure:
    """The NVMe tier (``sizing.nvme``)."""
    _, num = w.gettext, w.num
    tier = plan.nvme
    if tier.drive is None:
        if plan.request.workload.new_conversations_per_day and not plan.verdict.offload_pays:
            detail = _("offloading does not pay here, so no NVMe tier is sold")
            step = _("the verdict sells no offload tier, so the NVMe tier is left out too")
        else:
            detail = _("give new conversations per day to size one")
            step = _("no new conversations per day given")
        return Figure(
            key="nvme",
            label=_("NVMe tier"),
            value=_("none"),
            detail=detail,
            steps=(step,),
            source=_("our planning rule: an NVMe tier holds one day of new conversations"),
        )
    steps = [
        _("writes: %(n)s new conversations × %(gb)s GB = %(tb)s TB per day")
        % {
            "n": num(plan.request.workload.new_conversations_per_day),
            "gb": num(plan.conversation_bytes / GB, 2),
            "tb": num(tier.writes_tb_per_day, 1),
        },
        _("rated: %(count)s × %(cap)s TB × %(dwpd)s DWPD = %(rated)s TB per day")
        % {
            "count": num(tier.drive_count),
            "cap": num(tier.drive.capacity_tb, 2),
            "dwpd": num(tier.drive.dwpd, 0),
            "rated": num(tier.rated_writes_tb_per_day, 1),
        },
    ]
    return Figure(
        key="nvme",
        label=_("NVMe tier"),
        value=f"{num(tier.drive_count)} × {tier.drive.model}",
        detail=_("%(tb)s TB written per day") % {"tb": num(tier.writes_tb_per_day, 1)},
        steps=tuple(steps),
        source=_(
            "our planning rule (one day of new conversations); the drive makers' product "
            "briefs (capacity, DWPD); vLLM blog on KV offloading (every new block is written "
            "to each tier)"
        ),
    )


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
    efficiency transferred from another card."""
    _ = w.gettext
    t = plan.transfer
    out = []
    if t.basis is not None and t.basis.note:
        out.append(
            _(
                "not claimed: no prefill measurement on %(gpu)s; the H100 efficiencies are "
                "applied to its datasheet rates"
            )
            % {"gpu": plan.gpu.name}
        )
    if t.returning is not None:
        engine = _(ENGINE_NAMES[t.returning.engine])
        out += [
            _(NO_TIER_BASIS[h.tier]) % {"engine": engine} for h in t.returning.hits if h.hit is None
        ]
    return out


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
                "%(comm)s ms on %(tp)s GPU = %(ms)s ms"
            )
            % values
        )
    return (
        _(
            "miss: tokenize %(tokens)s tokens (%(fe)s ms) + prefill: fixed %(fixed)s ms + "
            "reading the weights %(read)s ms (longer than the multiplies and attention) + "
            "TP communication %(comm)s ms on %(tp)s GPU = %(ms)s ms"
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
        _("prefill of the %(new)s new tokens (%(ms)s ms)")
        % {"new": num(new_tokens), "ms": num(hit.prefill.total_ms, 1)}
    )
    terms.append(_("tokenization (%(ms)s ms)") % {"ms": num(hit.frontend_ms, 1)})
    return " + ".join(terms)


def transfer_figure(plan: Plan, w: Words) -> Figure:
    """A returning user's time to first token: miss, CPU-tier hit, GPU prefix hit
    (``sizing.transfer``, ``sizing.performance``)."""
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
    sources = "; ".join(measurements.titles(t.basis.sources)) if t.basis else ""
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


def figures(plan: Plan) -> list[Figure]:
    """Every figure of the estimate, in reading order, in the active language."""
    w = words(get_language() or "en")
    return [
        kv_figure(plan, w),
        gpu_figure(plan, w),
        resident_figure(plan, w),
        cpu_figure(plan, w),
        host_figure(plan, w),
        nvme_figure(plan, w),
        transfer_figure(plan, w),
    ]
