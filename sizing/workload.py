"""The customer's workload: one name, one default, one limit and one check per input.

Every surface (the configurator form, the stored inquiry, the CLI, the JSON API, a
quote's alternatives, the verification and the deployment bundle) speaks of a workload
in the field names of :class:`Workload` and converts to it once. A new input is a new
field here (with its limits in ``metadata`` and its check in :meth:`Workload.validate`);
the surfaces read the fields from this type (``docs/adding-an-input.md``).

Sources of the defaults: the sizing article's worked example (Qwen3-32B-FP8 on four
RTX PRO 6000 Blackwell Server Edition cards, FP8 KV cache, 8,192 tokens per
conversation, 500 users, 2,000 new conversations a day; docs/sizing.md). The KV dtypes are
vLLM's ``--kv-cache-dtype`` values (``vllm/config/cache.py``; ``auto`` = the model's
dtype).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sizing.errors import SizingError, gettext_noop
from sizing.inputs import MAX_TOKENS, Input, check_inputs, declared_inputs, input_field
from sizing.traffic import profile as traffic_inputs
from sizing.traffic.profile import Traffic

KV_DTYPES = ("auto", "bf16", "fp16", "fp32", "fp8")
"""Accepted ``kv_dtype`` values (vLLM ``--kv-cache-dtype``; ``auto`` = model dtype)."""

SERVING_ENGINES = ("", "vllm", "lmcache", "sglang", "dynamo")
"""Accepted ``serving_engine`` values: ``""`` (not decided) or the engine whose CPU tier
the plan sizes (the configurator's engine choice; ``lmcache`` is vLLM with LMCache in
process, ``dynamo`` NVIDIA Dynamo with KVBM)."""

DEFAULT_GPU = "rtx-pro-6000-se"
"""The seed example's card, RTX PRO 6000 Blackwell Server Edition (a catalog slug)."""

MAX_CONTEXT_TOKENS = MAX_TOKENS
MAX_USERS = 1_000_000
MAX_GPUS_PER_NODE = 16
MAX_NEW_CONVERSATIONS_PER_DAY = 10_000_000
MAX_MODEL_CHARS = 200
MAX_HOST_MEMORY_GB = 100_000


@dataclass(frozen=True, kw_only=True)
class Workload(Traffic):
    """What the customer wants to run: the inputs of one sizing plan.

    Attributes:
        model: Hugging Face repo id (``Qwen/Qwen3-32B-FP8``), or a private model's name.
        context_tokens: tokens per conversation (prompt and history), 1 to
            :data:`MAX_CONTEXT_TOKENS` and at most the model's ``max_position_embeddings``.
        users: conversations to keep, one per user, 1 to :data:`MAX_USERS`.
        gpu: GPU model, a slug of :mod:`sizing.hardware.catalog` (``rtx-pro-6000-se``…).
        gpus_per_node: GPUs in one node, 1 to :data:`MAX_GPUS_PER_NODE`.
        kv_dtype: KV-cache dtype, one of :data:`KV_DTYPES`.
        new_conversations_per_day: new conversations a day (sizes the NVMe tier; 0: none).
        active_share: share of the users active at the same moment, 0 < x ≤ 1; their
            conversations must be resident on the GPUs. ``None``: the seed's assumption
            that users take turns, so no check is made.
        shared_prompt_tokens: a system prompt every conversation starts with, 0 to
            ``context_tokens − 1``; prefix caching stores it once per replica.
        tensor_parallel_size: the tensor parallel size of one engine instance; ``None``
            lets the plan choose the smallest that holds one request
            (:mod:`sizing.plan.layout_choice`).
        expert_parallel: spread a MoE model's routed experts over the node's GPUs
            (vLLM ``--enable-expert-parallel``); no effect on dense models.
        max_host_memory_gb: the most host memory (DIMMs) one node may have, GB; a CPU
            tier beyond what it holds beside the reserve rests in the shared tier or is
            recomputed (:mod:`sizing.memory.host_memory`). ``None``: every slot may take the
            largest DIMM, so the tier keeps every user warm where the slots allow.
        without_shared_tier: plan no shared NFS/S3 tier, which the plan otherwise adds
            where it has more than one node or users beyond the nodes' CPU tiers
            (:mod:`sizing.layout.cluster`); returns whose KV only it would hold are recomputed.
        without_cpu_tier: plan no CPU-memory tier, and so no NVMe tier (the engines reach
            the NVMe tier through CPU memory): the counterfactual a saving is sized on;
        without_nvme_tier: plan no NVMe tier, whatever ``new_conversations_per_day`` says;
            the customer's figure is kept as given (:attr:`nvme_conversations_per_day`).
        serving_engine: the engine the CPU tier and the DIMMs are sized for, one of
            :data:`SERVING_ENGINES`; engines store an MLA latent differently
            (:meth:`sizing.memory.rank_bytes.RankBytes.engine_bytes`). ``""``: not decided, the
            largest allocation of any engine.
    """

    model: str = input_field(
        label=gettext_noop("the model"),
        help="Hugging Face repo id",
        max_length=MAX_MODEL_CHARS,
    )
    context_tokens: int = input_field(
        label=gettext_noop("the context (tokens)"),
        help="tokens per conversation",
        min=1,
        max=MAX_CONTEXT_TOKENS,
    )
    users: int = input_field(
        label=gettext_noop("the number of users"),
        help="conversations to keep, one per user",
        min=1,
        max=MAX_USERS,
    )
    gpu: str = input_field(
        DEFAULT_GPU, label=gettext_noop("the GPU"), help="GPU slug", max_length=64
    )
    gpus_per_node: int = input_field(
        4,
        label=gettext_noop("the number of GPUs per node"),
        help="GPUs in one node",
        min=1,
        max=MAX_GPUS_PER_NODE,
    )
    kv_dtype: str = input_field(
        "fp8",
        label=gettext_noop("the KV dtype"),
        help="KV-cache dtype; auto is the model's dtype",
        choices=KV_DTYPES,
    )
    new_conversations_per_day: int = input_field(
        0,
        label=gettext_noop("the number of new conversations per day"),
        help="sizes the NVMe tier; 0 means no NVMe tier",
        min=0,
        max=MAX_NEW_CONVERSATIONS_PER_DAY,
    )
    active_share: float | None = input_field(
        None,
        label=gettext_noop("the share of users active at once"),
        help="share of users active at once, above 0 and at most 1 (not given: users take turns)",
        exclusive_min=0,
        max=1,
    )
    shared_prompt_tokens: int = input_field(
        0,
        label=gettext_noop("the shared system prompt (tokens)"),
        help="system prompt shared by all conversations, tokens (stored once per replica)",
        min=0,
        max=MAX_CONTEXT_TOKENS,
    )
    tensor_parallel_size: int | None = input_field(
        None,
        label=gettext_noop("the tensor parallel size"),
        help="tensor parallel size of one engine instance (not given: the plan chooses)",
        min=1,
        max=MAX_GPUS_PER_NODE,
    )
    expert_parallel: bool = input_field(
        False,
        label=gettext_noop("expert parallelism"),
        help="spread a MoE model's experts over the node's GPUs (vLLM expert parallel)",
    )
    max_host_memory_gb: int | None = input_field(
        None,
        label=gettext_noop("the host memory per node (GB)"),
        help="most host memory per node, GB (not given: the CPU tier keeps every user warm)",
        min=1,
        max=MAX_HOST_MEMORY_GB,
    )
    without_shared_tier: bool = input_field(
        False,
        label=gettext_noop("the no-shared-tier switch"),
        help="plan no shared NFS/S3 tier (returns beyond the nodes' CPU tiers are recomputed)",
    )
    without_nvme_tier: bool = input_field(
        False,
        label=gettext_noop("the no-NVMe-tier switch"),
        help="plan no NVMe tier (new conversations per day are kept as given)",
    )
    without_cpu_tier: bool = input_field(
        False,
        label=gettext_noop("the no-CPU-tier switch"),
        help="plan no CPU-memory offload tier (and so no NVMe tier, which engines reach "
        "through it): the GPUs the targets need without offloading",
    )
    serving_engine: str = input_field(
        "",
        label=gettext_noop("the serving engine"),
        help="engine the CPU tier is sized for: vllm, lmcache, sglang or dynamo "
        "(not given: the largest allocation of any)",
        choices=SERVING_ENGINES,
    )

    @property
    def traffic(self) -> Traffic:
        """The traffic inputs alone, as :class:`sizing.traffic.profile.Traffic`."""
        return Traffic(**{name: getattr(self, name) for name in traffic_inputs.FIELDS})

    @property
    def nvme_conversations_per_day(self) -> int:
        """The new conversations a day the NVMe tier is sized for: 0 when
        :attr:`without_nvme_tier` is set (no tier, :func:`sizing.memory.nvme.nvme_tier`), else
        :attr:`new_conversations_per_day`."""
        return (
            0 if self.without_nvme_tier or self.without_cpu_tier else self.new_conversations_per_day
        )

    @property
    def active_users(self) -> int | None:
        """Users active at the same moment: ``⌈users × active_share⌉`` (``None``: not given)."""
        if self.active_share is None:
            return None
        return max(1, math.ceil(self.users * self.active_share - 1e-9))

    def validate(self, *, model_limit_tokens: int | None = None, model_name: str = "") -> None:
        """Check the inputs' numbers before any sizing.

        Args:
            model_limit_tokens: the model's ``max_position_embeddings`` (``None``: unknown).
            model_name: the model as the error names it (default: :attr:`model`).

        Each field is checked against its declaration first (:meth:`sizing.inputs.Input.check`,
        the check every surface makes), then the inputs against each other and the model.

        Raises:
            SizingError: naming the first field (a :class:`Workload` field name) that is
                out of range, with a ``code``, its English ``template`` and the
                ``values`` that fill it (the page translates the template).
        """
        check_inputs(self, INPUTS)
        name = model_name or self.model
        if model_limit_tokens and self.context_tokens > model_limit_tokens:
            raise SizingError(
                "context_tokens",
                template=gettext_noop(
                    "context of %(tokens)s tokens exceeds %(model)s's limit of %(limit)s "
                    "tokens (max_position_embeddings)"
                ),
                code="context_above_model_limit",
                values={"tokens": self.context_tokens, "model": name, "limit": model_limit_tokens},
            )
        prompt = self.shared_prompt_tokens
        if prompt >= self.context_tokens:
            raise SizingError(
                "shared_prompt_tokens",
                template=gettext_noop(
                    "the shared system prompt of %(got)s tokens must be shorter than the "
                    "context of %(context)s tokens"
                ),
                code="shared_prompt_not_below_context",
                values={"context": self.context_tokens, "got": prompt},
            )
        tp = self.tensor_parallel_size
        if tp is not None and tp > self.gpus_per_node:
            raise SizingError(
                "tensor_parallel_size",
                template=gettext_noop(
                    "the tensor parallel size of %(got)s is more than the %(gpus)s GPUs per node"
                ),
                code="tensor_parallel_above_gpus",
                values={"gpus": self.gpus_per_node, "got": tp},
            )
        traffic = self.traffic
        traffic_inputs.gaps(traffic)
        traffic_inputs.conversation_shape(traffic, self.context_tokens - prompt)

    def to_json(self) -> dict[str, Any]:
        """The workload as a JSON object, one key per field in :data:`FIELDS` order (what
        inquiries and quote alternatives store); :meth:`from_json` reads it back."""
        return {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Workload:
        """A workload from a JSON object: :meth:`to_json`'s, or a stored one of an earlier
        schema (:data:`LEGACY_NAMES`, ``active_share_percent`` in percent).

        The keys of :data:`MODEL_SOURCE_KEYS` (a private model's stored ``config.json``)
        are not workload inputs and are skipped; read them with :func:`model_source`.

        Raises:
            SizingError: naming a key that is no field, a field given twice (under its
                name and an earlier one), or a required field that is missing.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key in MODEL_SOURCE_KEYS:
                continue
            name = "active_share" if key == "active_share_percent" else LEGACY_NAMES.get(key, key)
            if name not in known:
                raise SizingError(key, f"unknown input {key!r}", code="unknown_input")
            if name in values:
                raise SizingError(name, f"{name} is given twice (as {key!r})", code="twice_input")
            if key == "active_share_percent" and value is not None:
                value = value / 100
            values[name] = value
        for name in REQUIRED:
            if name not in values:
                raise SizingError(name, f"{name} is required", code="required_input")
        return cls(**values)

    def replace(self, **changes: Any) -> Workload:
        """A copy with ``changes`` (field names of this type)."""
        return dataclasses.replace(self, **changes)


REQUIRED = tuple(f.name for f in dataclasses.fields(Workload) if f.default is dataclasses.MISSING)
"""Fields without a default: the model, the context and the users."""

FLAG_NAMES = {"gap_profile": "time-between-turns", "busy_hour_active_share": "busy-hour-share"}
"""Flags the CLI has spelled differently from the field (``--time-between-turns``) since
they were added; the field's own flag works as well."""

SHORT_NAMES = {"context_tokens": "context"}
"""Names the CLI (``--context``) and the JSON API (``"context"``) have taken for a field
from the start; both accept the field's own name as well."""

LEGACY_NAMES = {
    "model_id": "model",
    "context": "context_tokens",
    "gpu_slug": "gpu",
    "system_prompt_tokens": "shared_prompt_tokens",
    "shared_prefix_tokens": "shared_prompt_tokens",
}
"""Names that stored inputs, the CLI or the API used before for a field."""

MODEL_SOURCE_KEYS = ("private_config", "private_weights_gib")
"""Keys stored beside a workload for a private model: its ``config.json`` and weights."""


def stored_inputs(
    workload: Workload,
    *,
    private_config: Mapping[str, Any] | None = None,
    private_weights_gib: float | None = None,
) -> dict[str, Any]:
    """The JSON that inquiries and quote alternatives store: the workload's fields and,
    for a private model, its ``config.json`` and weights (:data:`MODEL_SOURCE_KEYS`)."""
    data = workload.to_json()
    if private_config is not None:
        data["private_config"] = dict(private_config)
        data["private_weights_gib"] = private_weights_gib
    return data


def model_source(data: Mapping[str, Any]) -> tuple[dict[str, Any] | None, float | None]:
    """A stored private model beside a workload: (``config.json`` object, weights GiB);
    ``(None, None)`` for a Hub model."""
    config = data.get("private_config")
    weights = data.get("private_weights_gib")
    return (dict(config) if config is not None else None, weights)


FIELDS = {
    f.name: f
    for f in sorted(dataclasses.fields(Workload), key=lambda f: f.name in traffic_inputs.FIELDS)
}
"""The fields of :class:`Workload` by name: its own in declaration order, then the
traffic inputs it takes from :class:`~sizing.traffic.profile.Traffic` (the order of the CLI's
flags, the API's schema and the stored JSON)."""

_DECLARED = declared_inputs(Workload)
INPUTS: dict[str, Input] = {name: _DECLARED[name] for name in FIELDS}
"""The inputs of :class:`Workload` as declared (type, default, label, limits), in
:data:`FIELDS` order: what :meth:`Workload.validate` and every surface check a value
against (:meth:`sizing.inputs.Input.check`)."""

SEED_WORKLOAD = Workload(
    model="Qwen/Qwen3-32B-FP8",
    context_tokens=8192,
    users=500,
    gpu="rtx-pro-6000-se",
    gpus_per_node=4,
    kv_dtype="fp8",
    new_conversations_per_day=2000,
)
"""The sizing article's worked example (docs/sizing.md): 1 GiB per conversation, 51 per card,
204 on the node, a 500 GiB CPU tier (125 GiB per instance), 24 × 48 GB DIMMs."""
