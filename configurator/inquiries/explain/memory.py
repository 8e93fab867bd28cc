"""The memory figures: KV cache per conversation, conversations resident on the GPUs,
the CPU tier, host memory and DIMMs, the NVMe tier (``sizing.model.architecture``,
``sizing.memory.host_memory``, ``sizing.memory.nvme``)."""

from __future__ import annotations

import math

from configurator.inquiries.explain.words import Figure, Words
from sizing.model.architecture import GROWING_KINDS, LayerKind
from sizing.plan.orchestrator import Plan
from sizing.units import GB, GIB, whole_gib


def kv_figure(plan: Plan, w: Words) -> Figure:
    """KV bytes per token and per conversation (``sizing.model.architecture``)."""
    _, num = w.gettext, w.num
    arch = plan.request.model.architecture
    ctx = plan.request.workload.context_tokens
    groups = arch.layer_groups
    growing = sum(count for layer, count in groups if layer.kind in GROWING_KINDS)
    # one kind of layer, full attention: the product of its geometry
    first = groups[0][0] if len(groups) == 1 else None
    uniform = first is not None and first.kind is LayerKind.FULL
    steps = []
    if uniform and first is not None:
        per_value = plan.kv_bytes_per_token // max(1, growing * first.values_per_token())
        steps.append(
            _(
                "per token: 2 (key and value) × %(layers)s layers × %(heads)s KV heads × "
                "%(dim)s values per head × %(bytes)s B = %(total)s B"
            )
            % {
                "layers": num(growing),
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
            % {"n": num(growing), "total": num(plan.kv_bytes_per_token)}
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


def resident_figure(plan: Plan, w: Words) -> Figure:
    """Conversations resident on the GPUs and those resting (``sizing.plan.layout_choice``)."""
    _, num = w.gettext, w.num
    p = plan.parallelism
    fits = {
        "budget": num(p.kv_cache_gib_per_gpu, 2),
        "prefix": num(p.shared_prefix_gib_per_gpu, 4),
        "card": num(p.conversation_gib_per_gpu, 4),
        "n": num(p.conversations_per_replica),
    }
    return Figure(
        key="resident",
        label=_("Conversations on the GPUs"),
        value=num(p.conversations_on_gpus),
        detail=_("%(per_gpu)s per GPU; %(resting)s of %(users)s rest between turns")
        % {
            "per_gpu": num(p.conversations_per_gpu, 0 if p.gpus_per_replica == 1 else 1),
            "resting": num(plan.resting_conversations),
            "users": num(plan.request.workload.users),
        },
        steps=(
            _(
                "one conversation on the card that holds the most of it: %(card)s GiB "
                "(tensor parallel %(tp)s, pipeline parallel %(pp)s)"
            )
            % {
                "card": fits["card"],
                "tp": num(p.tensor_parallel_size),
                "pp": num(p.pipeline_parallel_size),
            },
            (
                w.ngettext(
                    "per replica: ⌊(%(budget)s GiB − %(prefix)s GiB shared prompt) / "
                    "%(card)s GiB⌋ = %(n)s conversation",
                    "per replica: ⌊(%(budget)s GiB − %(prefix)s GiB shared prompt) / "
                    "%(card)s GiB⌋ = %(n)s conversations",
                    p.conversations_per_replica,
                )
                if p.shared_prefix_gib_per_gpu
                else w.ngettext(
                    "per replica: ⌊%(budget)s GiB / %(card)s GiB⌋ = %(n)s conversation",
                    "per replica: ⌊%(budget)s GiB / %(card)s GiB⌋ = %(n)s conversations",
                    p.conversations_per_replica,
                )
            )
            % fits,
            w.ngettext(
                "on the GPUs: %(n)s × %(replicas)s replica = %(total)s",
                "on the GPUs: %(n)s × %(replicas)s replicas = %(total)s",
                p.total_replicas,
            )
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
    """The CPU-memory tier (``sizing.memory.host_memory.cpu_tier``) and the vLLM flag."""
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
    # what the uncut tier keeps (sizing.memory.host_memory.cpu_tier); fewer: a node's host memory
    # cut it
    wanted = math.ceil(tier.users_per_instance)
    cut = tier.conversations_per_instance < wanted
    figures = {
        "n": num(tier.conversations_per_instance),
        "wanted": num(wanted),
        "users": num(plan.request.workload.users),
        "instances": num(par.total_replicas),
        "conv": num(tier.ranks.stored_conversation_bytes / GIB, 4),
        "per": num(tier.per_instance_gib, 1),
    }
    steps = [
        _(
            "per engine instance: %(per)s GiB, its share of a node's host memory beside the "
            "reserve, holds %(n)s whole conversations of %(conv)s GiB as its ranks store them, "
            "of the %(wanted)s it would keep warm (%(users)s users / %(instances)s, rounded up)"
        )
        % figures
        if cut
        else _(
            "per engine instance: %(n)s conversations (%(users)s users / %(instances)s, "
            "rounded up) × %(conv)s GiB as its ranks store them = %(per)s GiB"
        )
        % figures,
        w.ngettext(
            "× %(instances)s instance = %(gib)s GiB = %(gb)s GB",
            "× %(instances)s instances = %(gib)s GiB = %(gb)s GB",
            par.total_replicas,
        )
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
                # a value to paste into the engine's config: never grouped by language
                "bytes": str(plan.vllm_offload.cpu_bytes_to_use),
            }
        )
    return Figure(
        key="cpu",
        label=_("CPU-memory tier"),
        value=f"{num(whole_gib(tier.total_gib))} GiB ≈ {num(tier.total_gb)} GB",
        detail=_("%(per)s GiB pinned per engine instance")
        % {"per": num(whole_gib(tier.per_instance_gib))},
        steps=tuple(steps),
        source=_(
            "our planning rule (as many conversations kept warm as the host memory holds); "
            "vLLM documentation, --kv-offloading-size (GiB, total over the instance's GPUs)"
        )
        if cut
        else _(
            "our planning rule (every user's conversation kept warm); vLLM documentation, "
            "--kv-offloading-size (GiB, total over the instance's GPUs)"
        ),
    )


def host_figure(plan: Plan, w: Words) -> Figure:
    """Host memory and the DIMM layout per socket (``sizing.memory.host_memory.host_memory``)."""
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
    """The NVMe tier (``sizing.memory.nvme``)."""
    _, num = w.gettext, w.num
    tier = plan.nvme
    if tier.drive is None:
        if plan.request.workload.without_nvme_tier:
            detail = _("no NVMe tier asked for")
            step = _("the NVMe tier is turned off, whatever the new conversations per day")
        elif plan.request.workload.nvme_conversations_per_day and not plan.verdict.offload_pays:
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
            "tb": num(tier.total_writes_tb_per_day, 1),
        },
        *(
            (
                _("per node: %(tb)s TB over %(nodes)s nodes = %(per_node)s TB per day")
                % {
                    "tb": num(tier.total_writes_tb_per_day, 1),
                    "nodes": num(tier.nodes),
                    "per_node": num(tier.writes_tb_per_day, 2),
                },
            )
            if tier.nodes > 1
            else ()
        ),
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
        value=(
            _("%(n)s × %(drive)s per node (%(all)s in all)")
            % {
                "n": num(tier.drive_count),
                "drive": tier.drive.model,
                "all": num(tier.drive_count * plan.parallelism.nodes),
            }
            if plan.parallelism.nodes > 1
            else f"{num(tier.drive_count)} × {tier.drive.model}"
        ),
        detail=(
            _("%(tb)s TB written per day in total, over all %(nodes)s nodes")
            % {"tb": num(tier.total_writes_tb_per_day, 1), "nodes": num(plan.parallelism.nodes)}
            if plan.parallelism.nodes > 1
            else _("%(tb)s TB written per day") % {"tb": num(tier.writes_tb_per_day, 1)}
        ),
        steps=tuple(steps),
        source=_(
            "our planning rule (one day of new conversations); the drive makers' product "
            "briefs (capacity, DWPD); vLLM blog on KV offloading (every new block is written "
            "to each tier)"
        ),
    )


def nodes_figure(plan: Plan, w: Words) -> Figure | None:
    """Nodes, router and shared tier of a multi-node plan (``sizing.serving.serve``'s shared
    tier: TB for every node, GB/s per node); ``None`` for a one-node plan."""
    _, num = w.gettext, w.num
    par = plan.parallelism
    if par.nodes < 2:
        return None
    shared = plan.serving.shared if plan.serving else None
    tier = (
        _("shared tier (NFS/pNFS or S3): %(tb)s TB, %(gbps)s GB/s network per node")
        % {"tb": num(shared.capacity_tb, 1), "gbps": num(shared.gbps_per_node, 2)}
        if shared
        else _("no shared tier")
    )
    return Figure(
        key="nodes",
        label=_("Nodes"),
        value=_("%(nodes)s nodes × %(n)s GPUs = %(g)s GPUs")
        % {
            "nodes": num(par.nodes),
            "n": num(plan.request.workload.gpus_per_node),
            "g": num(par.gpus),
        },
        detail=tier,
        steps=(
            _(
                "a KV-aware router in front of the instances sends every turn of a "
                "conversation to the instance that holds its KV cache"
            ),
            _("host memory and NVMe drives are per node; the BOM counts them for every node"),
            tier,
        ),
        source=_(
            "our planning rule (one node holds what its chassis takes; sizing.layout.cluster)"
        ),
    )
