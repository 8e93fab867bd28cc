"""What one conversation leaves on each rank of an engine instance, and what each
engine's CPU tier stores of it.

On the GPU every tensor-parallel rank keeps its own share of a conversation's KV cache:

- full and windowed attention: ``max(1, kv_heads // TP)`` heads per rank, so when TP
  exceeds the KV heads every head is held by ``TP / kv_heads`` ranks (vLLM
  ``ModelConfig.get_num_kv_heads``; Qwen3-235B-A22B, 4 KV heads at TP 8: one head per
  rank, each head twice);
- MLA: the whole latent on every rank (vLLM ``MLAAttentionSpec``; the latent is not
  sharded by TP);
- pipeline parallel: each stage holds only its own layers (vLLM
  ``vllm/distributed/utils.py::get_pp_indices``).

The host tier of each engine copies what the ranks hold, each in its own way
(:class:`RankBytes` gives one method per rule):

- **stored by the ranks** (``per_rank × ranks``): LMCache in-process per worker
  (``lmcache/v1/cache_engine.py``, one engine per worker), SGLang HiCache per rank (the
  MLA host pool keeps the whole latent on every rank: ``MLATokenToKVPoolHost.
  get_size_per_token`` is ``(kv_lora_rank + qk_rope_head_dim) × layers × bytes``,
  ``sglang/srt/mem_cache/memory_pool_host.py``, ``mem_cache/pool_host/`` in 0.5.2x),
  Dynamo KVBM (the leader divides by the summed ``bytes_per_block`` of all workers,
  ``lib/llm/src/block_manager/distributed/leader.rs``) and the LMCache server for GQA
  (each worker writes its own piece).
  With pipeline stages of unequal layer counts every rank is sized like the fullest
  one (SGLang syncs the stages to the smallest capacity, vLLM gives every worker the
  same share). No engine allocates more: this is the CPU tier and what the DIMMs are
  sized on when the workload names no serving engine; a named engine's tier is its own
  allocation (:meth:`RankBytes.engine_bytes`), so an MLA model served by vLLM is not
  sold the memory SGLang would need.
- **LMCache server with MLA** (``lmcache/integration/vllm/vllm_multi_process_adapter.py``
  ``ParallelStrategy``): the latent is replicated over TP, so only the first rank of each
  stage writes; the server keeps one copy per pipeline stage.
- **vLLM native** (``vllm/v1/kv_offload/cpu/spec.py``): ``num_blocks = cpu_bytes_to_use
  // (page_bytes_per_worker × world_size)``, so every worker needs the binding stage's
  bytes; with MLA on one node (TP > 1, ``mp`` executor) the latent is stored once, not
  once per worker (the replicated layout: engine_flags.md §1.2, read from the 0.31.0
  wheel; ``vllm/v1/kv_offload/cpu/shared_offload_region.py`` describes one canonical
  copy replacing the workers' copies of KV replicated across them).
- **LMCache in-process with MLA** (0.5.6 wheel, ``lmcache/v1/cache_engine.py``
  ``_Create_memory_allocator``): ``save_only_first_rank`` defaults to true for MLA; only
  the first rank keeps a CPU tier, of ``extra_config.first_rank_max_local_cpu_size``
  GiB (default ``max_local_cpu_size``), and the other ranks start no storage manager.
  ``lmcache/v1/metadata.py``: ``is_first_rank`` is worker 0 of the whole instance
  (``worker_id`` is vLLM's global rank, ``lmcache/integration/vllm/utils.py``), so with
  pipeline parallel the later stages would save nothing; the bundle then turns it off
  and every worker keeps its stage's latent.

A shared system prompt is stored once per instance (prefix caching, see
:mod:`sizing.memory.host_memory`), on every rank like any other token.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sizing.layout.parallelism import pipeline_stages
from sizing.model.architecture import Architecture, conversation_bytes, kv_bytes_per_token


@dataclass(frozen=True)
class StageBytes:
    """One pipeline stage's share of a conversation on each of its TP ranks.

    Attributes:
        conversation_bytes: one conversation without the shared prompt, on one rank.
        prefix_bytes: the shared system prompt, on one rank.
    """

    conversation_bytes: int
    prefix_bytes: int

    def tier_bytes(self, conversations: int) -> int:
        """``conversations`` plus one shared prompt on one rank of this stage, bytes."""
        return conversations * self.conversation_bytes + self.prefix_bytes


def stage_bytes(
    arch: Architecture,
    kv_dtype: str,
    context_tokens: int,
    prefix_tokens: int,
    tp: int,
    pp: int = 1,
) -> tuple[StageBytes, ...]:
    """Per pipeline stage, what one conversation leaves on each of the stage's TP ranks.

    Args:
        arch: model geometry.
        kv_dtype: KV-cache dtype.
        context_tokens: tokens of one full-length conversation.
        prefix_tokens: tokens of the shared system prompt (counted apart).
        tp: tensor parallel size.
        pp: pipeline parallel size (stages split the layers as vLLM does).

    Raises:
        ValueError: if ``context_tokens`` is not positive or ``pp`` exceeds the layers.
    """
    out = []
    for start, end in pipeline_stages(arch.num_layers, pp):
        stage = replace(arch, layers=arch.layers[start:end]) if pp > 1 else arch
        whole = conversation_bytes(stage, kv_dtype, context_tokens, tp)
        prefix = kv_bytes_per_token(stage, kv_dtype, tp) * prefix_tokens
        out.append(StageBytes(whole - prefix, prefix))
    return tuple(out)


@dataclass(frozen=True)
class RankBytes:
    """A conversation's bytes on the ranks of one instance, and each engine's reading.

    Attributes:
        stages: :class:`StageBytes` of each pipeline stage, in order.
        tensor_parallel_size: TP ranks per stage.
        uses_mla: whether the attention layers store an MLA latent (replicated on every
            TP rank).
    """

    stages: tuple[StageBytes, ...]
    tensor_parallel_size: int
    uses_mla: bool = False

    @property
    def world_size(self) -> int:
        """Workers of the instance (TP × PP)."""
        return self.tensor_parallel_size * len(self.stages)

    def binding_rank_bytes(self, conversations: int) -> int:
        """What the fullest rank stores for ``conversations`` plus the prompt, bytes."""
        return max(s.tier_bytes(conversations) for s in self.stages)

    def stored_bytes(self, conversations: int) -> int:
        """What the ranks together allocate (per-rank bytes × ranks), bytes: every rank
        sized like the fullest one, as SGLang's per-rank ``--hicache-size`` and vLLM's
        per-worker split of ``cpu_bytes_to_use`` are. The plan's tier; no engine
        allocates more."""
        return self.binding_rank_bytes(conversations) * self.world_size

    @property
    def stored_conversation_bytes(self) -> int:
        """One conversation without the shared prompt as all ranks store it, bytes
        (what tiering writes to every secondary tier per new conversation)."""
        return self.stored_bytes(1) - self.stored_bytes(0)

    def vllm_native_bytes(self, conversations: int) -> int:
        """``cpu_bytes_to_use`` that holds ``conversations`` (see module doc): one copy of
        the latent for MLA on one node, else the binding worker's bytes × world size."""
        if self.uses_mla and len(self.stages) == 1:
            return self.stages[0].tier_bytes(conversations)
        return self.binding_rank_bytes(conversations) * self.world_size

    def engine_bytes(self, engine: str, conversations: int) -> int:
        """What the CPU tier of ``engine`` (a :data:`sizing.workload.SERVING_ENGINES`
        value) allocates over all ranks to hold ``conversations`` plus the prompt, bytes:
        vLLM native :meth:`vllm_native_bytes`; LMCache in-process with MLA on one stage
        the first rank alone (one copy of the latent); SGLang, Dynamo KVBM, LMCache for
        other layouts and an undecided engine (``""``) :meth:`stored_bytes`, the largest
        (module docstring for each engine's source)."""
        if engine == "vllm":
            return self.vllm_native_bytes(conversations)
        if engine == "lmcache" and self.lmcache_first_rank_only:
            return self.stages[0].tier_bytes(conversations)
        return self.stored_bytes(conversations)

    def engine_conversation_bytes(self, engine: str) -> int:
        """One conversation without the shared prompt in ``engine``'s CPU tier, bytes."""
        return self.engine_bytes(engine, 1) - self.engine_bytes(engine, 0)

    @property
    def lmcache_first_rank_only(self) -> bool:
        """Whether LMCache in-process keeps the tier on worker 0 alone (MLA on one stage)."""
        return self.uses_mla and len(self.stages) == 1

    def lmcache_server_bytes(self, conversations: int, stage: int) -> int:
        """What the LMCache server of pipeline stage ``stage`` keeps, bytes: every TP
        worker's piece, or for MLA one copy written by the stage's first rank
        (``lmcache/integration/vllm/vllm_multi_process_adapter.py``,
        ``ParallelStrategy.is_kv_writer`` and ``kv_world_size``)."""
        copies = 1 if self.uses_mla else self.tensor_parallel_size
        return copies * self.stages[stage].tier_bytes(conversations)
