"""One conversation's KV cache on one card of a replica, pipeline stage by stage.

Per conversation and card: TP splits the KV heads (replicated when TP exceeds them);
PP splits the layers as vLLM does (``vllm/distributed/utils.py::get_pp_indices``: the
layers divided evenly, the remainder added to the stages before the last one). A shared
system prompt is stored once per replica (prefix caching, see :mod:`sizing.plan.orchestrator`), so a
stage's cache is one conversation's own bytes and the prefix's bytes apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sizing.layout.parallelism import pipeline_stages
from sizing.model.architecture import Architecture, conversation_bytes, kv_bytes_per_token
from sizing.units import GIB


@dataclass(frozen=True)
class ConversationShape:
    """What one conversation asks of the GPUs.

    Attributes:
        kv_dtype: KV-cache dtype (``fp8``, ``auto``…).
        context_tokens: tokens of one full-length conversation.
        shared_prefix_tokens: tokens of a system prompt all conversations share.
    """

    kv_dtype: str
    context_tokens: int
    shared_prefix_tokens: int = 0


@dataclass(frozen=True)
class LayerSums:
    """Running totals over the layers for one TP size: ``whole[i]`` and ``prefix[i]`` are
    one conversation's bytes and the shared prefix's bytes in layers ``[0, i)`` on one
    rank, so a pipeline stage's bytes are two subtractions."""

    whole: tuple[int, ...]
    prefix: tuple[int, ...]


def layer_sums(arch: Architecture, work: ConversationShape, tp: int) -> LayerSums:
    """The running totals of :class:`LayerSums`; both sums add up layer by layer
    (:func:`conversation_bytes`, :func:`kv_bytes_per_token`), and identical layers (most
    of a model) are computed once (``Architecture.layer_groups``)."""
    per_group = []
    for layer, _count in arch.layer_groups:
        one = replace(arch, layers=(layer,))
        per_group.append(
            (
                conversation_bytes(one, work.kv_dtype, work.context_tokens, tp),
                kv_bytes_per_token(one, work.kv_dtype, tp) * work.shared_prefix_tokens,
            )
        )
    whole, prefix = [0], [0]
    for group in arch.layer_group_index:
        got = per_group[group]
        whole.append(whole[-1] + got[0])
        prefix.append(prefix[-1] + got[1])
    return LayerSums(tuple(whole), tuple(prefix))


def stage_cache_gib(sums: LayerSums, num_layers: int, pp: int) -> list[tuple[float, float]]:
    """Per stage: (one conversation's own cache, the shared prefix) on one card, GiB."""
    out = []
    for start, end in pipeline_stages(num_layers, pp):
        whole = sums.whole[end] - sums.whole[start]
        prefix = sums.prefix[end] - sums.prefix[start]
        out.append(((whole - prefix) / GIB, prefix / GIB))
    return out
