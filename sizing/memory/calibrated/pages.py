"""vLLM's KV-cache layout: page sizes, layer groups, block count, token capacity.

Rules (reference ``vllm_memory_model.md`` §2, read from ``vllm/v1/kv_cache_interface.py``
and ``vllm/v1/core/kv_cache_utils.py``):

- a page is one block of ``block_size`` tokens for one layer: full attention
  ``block × kv_heads_per_rank × (head_dim_k + head_dim_v) × dtype``; MLA ``block × latent
  × dtype`` (``fp8_ds_mla``: 656 B per token); a Mamba/linear layer one state;
- hybrids with a recurrent state raise the attention block size to the smallest multiple
  of 16 whose page holds one state, then pad the state page to it
  (``Platform._align_hybrid_block_size``);
- attention layers whose page is smaller than the largest get a larger block so that
  every page is equal: ``block × (largest page // their page)`` when it divides, else
  their page is padded (``unify_kv_cache_spec_page_size``, 0.31.0 wheel); Gemma-4 style
  global layers with another head geometry than the sliding ones thus hold more tokens
  per block;
- a recurrent state holds 1 page per request without prefix caching and 2 with it
  (``mamba_cache_mode`` ``align``, ``MambaSpec.max_memory_usage_bytes``); generative
  hybrids have prefix caching on by default in 0.31.0 (``ModelConfig.
  is_prefix_caching_supported``, ``MambaModelConfig.verify_and_update_config``), so from
  that version on 2 pages are counted; earlier versions were not read and keep 1;
- layers are cut into groups of ``group_size`` layers per attention type: the smallest
  per-type layer count, or the largest when largest < 1.5 × smallest
  (``_get_kv_cache_groups_uniform_page_size``);
- ``num_blocks = available // page // group_size``, the minimum over ranks;
- reported tokens: up to v0.19 ``num_blocks // groups × smallest block``
  (``_report_kv_cache_config``),
  from v0.20 ``int(max_concurrency × max_model_len)`` (``get_kv_cache_capacity``);
- max concurrency ``num_blocks / Σ_groups blocks one request holds``: full
  ``cdiv(len, block)``, sliding ``cdiv(min(window − 1 + batched, len), block) + 1``, chunked
  ``cdiv(min(chunk + batched, len), block)``, a state 1 page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.memory.calibrated.setup import EngineSetup
from sizing.model.architecture import ATTENTION_KINDS, LayerKind
from sizing.model.recurrent import DTYPE_BYTES
from sizing.model.spec import ModelSpec

DEFAULT_BLOCK_SIZE = 16
"""vLLM ``CacheConfig.DEFAULT_BLOCK_SIZE`` on CUDA."""
HYBRID_BLOCK_ALIGNMENT = 16
"""Attention kernel block alignment used when sizing hybrid blocks (reference §2.4)."""
MAMBA_ALIGN_SINCE = (0, 31)
"""First version read whose hybrids default to prefix caching, hence ``align`` mode."""
CAPACITY_FORMULA_SINCE = (0, 20)
"""First version assumed to report tokens as ``max_concurrency × max_model_len`` (#51041)."""
FP8_DS_MLA_BYTES_PER_TOKEN = 656
"""DeepSeek-V3.2 sparse MLA cache bytes per token and layer (reference §2.2)."""


@dataclass(frozen=True)
class GroupType:
    """Layers of one cache type on one rank.

    Attributes:
        kind: the layer kind (a state layer is ``LINEAR`` or ``MAMBA``).
        window_tokens: window or chunk of windowed layers, else ``None``.
        layers: layers of this type on the rank.
        block_size: tokens per block of this type (0 for a state).
    """

    kind: LayerKind
    window_tokens: int | None
    layers: int
    block_size: int = 0


@dataclass(frozen=True)
class KvLayout:
    """How one rank's KV memory is cut into blocks.

    Attributes:
        block_size: tokens per block of the attention type with the largest page (the
            smallest block).
        page_bytes: bytes of one block of one layer (after unification and padding).
        group_size: layers per group (tensors that share one block id).
        types: the cache types on the rank.
        attention_bytes_per_token: bytes one token adds over the rank's attention layers.
        state_pages: pages a recurrent state holds per request (1, or 2 in ``align``).
    """

    block_size: int
    page_bytes: int
    group_size: int
    types: tuple[GroupType, ...]
    attention_bytes_per_token: int
    state_pages: int = 1

    @property
    def num_groups(self) -> int:
        """KV-cache groups (the log's ``kv_cache_groups``)."""
        return sum(math.ceil(t.layers / self.group_size) for t in self.types)


def kv_value_bytes(model: ModelSpec, setup: EngineSetup) -> int:
    """Bytes per cached value: the KV dtype, ``auto`` meaning the serving dtype."""
    name = setup.kv_cache_dtype
    if name in ("auto", "", "fp8_ds_mla"):
        name = setup.dtype if setup.dtype not in ("auto", "") else model.architecture.dtype
    return DTYPE_BYTES.get(name.lower(), 2)


def model_value_bytes(model: ModelSpec, setup: EngineSetup) -> int:
    """Bytes per value of the serving dtype (the Mamba state dtype by default)."""
    name = setup.dtype if setup.dtype not in ("auto", "") else model.architecture.dtype
    return DTYPE_BYTES.get(name.lower(), 2)


def vllm_layout(model: ModelSpec, setup: EngineSetup) -> KvLayout:
    """The block layout of the most loaded rank (the first pipeline stage).

    Raises:
        ValueError: if the model has no cache-holding layer.
    """
    arch = model.architecture
    tp = setup.tensor_parallel_size
    per_stage = math.ceil(arch.num_layers / setup.pipeline_parallel_size)
    layers = arch.layers[:per_stage]
    value_bytes = kv_value_bytes(model, setup)
    state_dtype = model_value_bytes(model, setup)
    counts: dict[tuple[LayerKind, int | None], int] = {}
    type_token_bytes: dict[tuple[LayerKind, int | None], int] = {}
    attn_token_bytes: list[int] = []
    state_bytes = 0
    for layer in layers:
        if layer.kind in ATTENTION_KINDS:
            key = (layer.kind, layer.window_tokens)
            counts[key] = counts.get(key, 0) + 1
            if layer.kind is LayerKind.MLA and setup.kv_cache_dtype == "fp8_ds_mla":
                attn_token_bytes.append(FP8_DS_MLA_BYTES_PER_TOKEN)
            else:
                attn_token_bytes.append(layer.values_per_token(tp) * value_bytes)
            type_token_bytes[key] = max(type_token_bytes.get(key, 0), attn_token_bytes[-1])
        if layer.state is not None:
            key = (layer.kind if layer.kind not in ATTENTION_KINDS else LayerKind.MAMBA, None)
            counts[key] = counts.get(key, 0) + 1
            state_bytes = max(state_bytes, layer.state_bytes(state_dtype, tp))
    if not counts:
        raise ValueError(f"{model.repo_id} has no layer that holds a KV cache")
    per_token = max(attn_token_bytes, default=0)
    block = setup.block_size or DEFAULT_BLOCK_SIZE
    if state_bytes and per_token:
        needed = math.ceil(state_bytes / per_token)
        block = max(block, math.ceil(needed / HYBRID_BLOCK_ALIGNMENT) * HYBRID_BLOCK_ALIGNMENT)
    page = max(block * per_token, state_bytes)
    sizes = list(counts.values())
    smallest, largest = min(sizes), max(sizes)
    group_size = largest if largest < 1.5 * smallest else smallest
    types = tuple(
        GroupType(
            kind, window, n, _unified_block(block, type_token_bytes.get((kind, window), 0), page)
        )
        for (kind, window), n in counts.items()
    )
    state_pages = 2 if setup.version >= MAMBA_ALIGN_SINCE else 1
    return KvLayout(block, page, group_size, types, sum(attn_token_bytes), state_pages)


def _unified_block(block: int, token_bytes: int, page: int) -> int:
    """Tokens per block of an attention type once pages are unified (module docstring);
    0 for a state type."""
    if not token_bytes:
        return 0
    own = block * token_bytes
    return block * (page // own) if page % own == 0 else block


def num_blocks(layout: KvLayout, kv_cache_bytes: float) -> int:
    """Blocks that ``kv_cache_bytes`` of one rank hold (never negative)."""
    return max(0, int(kv_cache_bytes // layout.page_bytes // layout.group_size))


def blocks_per_request(layout: KvLayout, max_model_len: int, batched_tokens: int) -> int:
    """Blocks one ``max_model_len`` request holds over all groups."""
    total = 0
    for t in layout.types:
        groups = math.ceil(t.layers / layout.group_size)
        block = t.block_size or layout.block_size
        if t.kind in (LayerKind.FULL, LayerKind.MLA):
            need = math.ceil(max_model_len / block)
        elif t.kind is LayerKind.SLIDING:
            span = min((t.window_tokens or 0) - 1 + batched_tokens, max_model_len)
            need = math.ceil(span / block) + 1
        elif t.kind is LayerKind.CHUNKED:
            need = math.ceil(min((t.window_tokens or 0) + batched_tokens, max_model_len) / block)
        else:
            need = layout.state_pages
        total += groups * need
    return total


def max_concurrency(layout: KvLayout, blocks: int, max_model_len: int, batched: int) -> float:
    """Requests of ``max_model_len`` tokens that ``blocks`` hold at once."""
    return blocks / blocks_per_request(layout, max_model_len, batched)


def reported_tokens(layout: KvLayout, blocks: int, setup: EngineSetup, batched_tokens: int) -> int:
    """The "GPU KV cache size: N tokens" figure of that vLLM version."""
    if setup.version >= CAPACITY_FORMULA_SINCE and any(
        t.kind not in (LayerKind.FULL, LayerKind.MLA) for t in layout.types
    ):
        conc = max_concurrency(layout, blocks, setup.max_model_len, batched_tokens)
        return int(conc * setup.max_model_len)
    return blocks // layout.num_groups * layout.block_size
