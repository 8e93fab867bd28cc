"""The JSON API's requests: the workload's fields as a schema, generated from the types.

Each field of :class:`~sizing.workload.Workload` (and of the bundle's
:class:`~sizing.engines.shared_tier.TierOptions`) becomes one schema field with its type,
default, limits and English description (:func:`schema_fields`); unknown fields are
refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

from ninja import Field, Schema
from pydantic import (
    AfterValidator,
    AliasChoices,
    BeforeValidator,
    ConfigDict,
    JsonValue,
    create_model,
)

from configurator.deployments.api_body import OverlongInteger
from sizing.engines.bundle import ENGINES
from sizing.engines.shared_tier import TIER_FIELDS, TierOptions
from sizing.hardware import catalog
from sizing.inputs import Input
from sizing.workload import FIELDS, INPUTS, SHORT_NAMES, Workload

Engine = Literal[(*ENGINES, "all")]  # type: ignore[valid-type]


def _integral(value: object) -> object:
    """A JSON number with no fraction (``11.0``) as the integer it is: JSON Schema's
    ``integer`` accepts it, so the server does too; ``11.5`` and ``true`` stay refused."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def declared_check(declared: Input) -> BeforeValidator:
    """The validator that checks a JSON value against the declaration of ``declared``
    (:meth:`sizing.inputs.Input.check`, as the form and the CLI do) before the schema's
    own type check: an input out of its limits is refused with the sizing engine's
    sentence, not pydantic's. A whole number written ``11.0`` counts as ``11``; one of
    more digits than Python reads (:class:`OverlongInteger`) is out of the input's range.
    """

    def check(value: object) -> object:
        if isinstance(value, OverlongInteger):
            raise declared.out_of_range(value.approximately)
        if declared.kind is int:
            value = _integral(value)
        declared.check(value)
        return value

    return BeforeValidator(check)


Whole = Annotated[int, BeforeValidator(_integral)]
GPU_SLUGS: list[JsonValue] = [slug for slug in sorted(catalog.gpus())]
"""The GPUs the sizing engine knows (``sizing/data/hardware.json``), as the schema's enum."""


def _known_gpu(value: str) -> str:
    """``value`` if the catalog knows the GPU (:func:`sizing.hardware.catalog.gpu`).

    Raises:
        SizingError: on ``gpu``, listing the known GPUs.
    """
    catalog.gpu(value)
    return value


Gpu = Annotated[str, AfterValidator(_known_gpu)]
KINDS: dict[Any, Any] = {int: Whole, int | None: Whole | None}
"""Schema types of :class:`Workload` field types where the schema says more (whole
numbers written as ``11.0``)."""


def _inner_limits(kind: Any, constraints: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """``kind`` and ``constraints`` with the limits of an optional type (``X | None``)
    moved onto ``X``, so that its schema says ``minimum``/``maximum`` (JSON Schema) in
    its ``anyOf`` branch; on the union pydantic writes them as ``ge``/``le`` instead
    (pydantic 2's JSON schema of constraints it cannot place)."""
    args = get_args(kind)
    if len(args) != 2 or type(None) not in args or not constraints:
        return kind, constraints
    (inner,) = (arg for arg in args if arg is not type(None))
    # the limits go on the base type, before its validators (``Whole``'s): after a
    # validator pydantic keeps them as ``ge``/``le`` as well
    base, *validators = get_args(inner) if get_origin(inner) is Annotated else (inner,)
    return Annotated[(base, Field(**constraints), *validators)] | None, {}


def schema_fields(
    cls: type,
    fields: dict[str, dataclasses.Field[Any]],
    short_names: dict[str, str],
    inputs: Mapping[str, Input] | None = None,
) -> dict[str, Any]:
    """One schema field per dataclass field of ``cls``: its type, default, limits and
    English description from the field's ``metadata`` (``choices`` become an enum,
    ``gpu`` the catalog's GPUs); a name of ``short_names`` (``context``) is accepted as
    well. A field of ``inputs`` is checked by its declaration first (:func:`declared_check`)."""
    hints = get_type_hints(cls)
    out: dict[str, Any] = {}
    for name, f in fields.items():
        meta = f.metadata
        kind = Literal[tuple(meta["choices"])] if "choices" in meta else hints[name]
        kind = KINDS.get(kind, kind)
        extra: dict[str, Any] = {}
        if name == "gpu":
            kind, extra = Gpu, {"json_schema_extra": {"enum": GPU_SLUGS}}
        constraints = {
            key: meta[limit]
            for key, limit in (
                ("ge", "min"),
                ("le", "max"),
                ("gt", "exclusive_min"),
                ("max_length", "max_length"),
                ("min_length", "min_length"),
            )
            if limit in meta
        }
        kind, constraints = _inner_limits(kind, constraints)
        if inputs is not None and name in inputs:
            kind = Annotated[kind, declared_check(inputs[name])]
        names = [name, short_names[name]] if name in short_names else [name]
        default = ... if f.default is dataclasses.MISSING else f.default
        out[name] = (
            kind,
            Field(
                default,
                description=meta["help"],
                validation_alias=AliasChoices(*names),
                **constraints,
                **extra,
            ),
        )
    return out


class StrictFields(Schema):
    """A schema that refuses fields it does not declare (400 naming the field), and
    ``NaN`` or ``Infinity`` for a number."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


SizingFields = create_model(
    "SizingFields",
    __base__=StrictFields,
    __doc__="The workload (``sizing.workload.Workload``); unknown fields are refused.",
    **schema_fields(Workload, FIELDS, SHORT_NAMES, INPUTS),
)


class SizingRequest(SizingFields):  # type: ignore[misc, valid-type]
    """A JSON sizing request; types are strict (``false`` is not a number)."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


TierFields = create_model(
    "TierFields",
    __base__=SizingFields,
    __doc__="The workload and the bundle's tiers (``sizing.engines.shared_tier.TierOptions``).",
    **schema_fields(TierOptions, TIER_FIELDS, {}),
)


class BundleQuery(TierFields):  # type: ignore[misc, valid-type]
    """A sizing request plus the bundle's engine and its tier options."""

    engine: Engine = "all"


class RecommendRequest(SizingRequest):
    """A sizing request plus the GPU types to search (default: every priced GPU).

    ``gpu`` and ``gpus_per_node`` are the reference layout the answer is compared with;
    ``kv_dtype`` ``fp8`` allows an FP8 cache where the GPU runs one natively.
    """

    gpus: list[Gpu] = Field(default_factory=list, max_length=64, examples=[["h200-nvl"]])
    top: int = Field(3, ge=1, le=20)
