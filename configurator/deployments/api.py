"""The JSON API (OpenAPI at ``/api/docs``): size a workload, download its bundle."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from ninja import Field, NinjaAPI, Query, Schema
from ninja.errors import HttpError, ValidationError, ValidationErrorContext
from pydantic import (
    AfterValidator,
    AliasChoices,
    BeforeValidator,
    ConfigDict,
    JsonValue,
    create_model,
)

from configurator.clients import rate_limited
from configurator.deployments.api_body import (
    JSON_TYPE,
    BodyRefused,
    UnsupportedMediaType,
    WorkloadParser,
)
from configurator.deployments.api_docs import LocalSwagger
from configurator.deployments.services import bundle_build
from configurator.modelhub.errors import HubLookupPending
from configurator.planning.recommend import recommendation_create
from configurator.planning.services import plan_create
from sizing import catalog
from sizing.engines.bundle import ENGINES
from sizing.engines.shared_tier import TIER_FIELDS, TierOptions
from sizing.errors import SizingError
from sizing.plan import Plan
from sizing.summary import plan_summary
from sizing.workload import FIELDS, SHORT_NAMES, Workload


class SizingApi(NinjaAPI):
    """The API; a JSON body's validation errors are located as ``["body", <field>]``.

    django-ninja prefixes the view parameter's name (``["body", "body", "users"]``);
    the body is the whole sizing request, so that middle name carries nothing.
    """

    def validation_error_from_error_contexts(
        self, error_contexts: list[ValidationErrorContext[Any]]
    ) -> ValidationError:
        error = super().validation_error_from_error_contexts(error_contexts)
        for item in error.errors:
            loc = tuple(item["loc"])
            if loc[:2] == ("body", "body"):
                item["loc"] = ("body", *loc[2:])
        return error


api = SizingApi(
    parser=WorkloadParser(),
    title="KV-offload configurator",
    version="1",
    description="Sizing plans and deployment bundles for KV-cache offloading.",
    urls_namespace="api",
    docs=LocalSwagger(),
)

Engine = Literal[(*ENGINES, "all")]  # type: ignore[valid-type]


def _integral(value: Any) -> Any:
    """A JSON number with no fraction (``11.0``) as the integer it is: JSON Schema's
    ``integer`` accepts it, so the server does too; ``11.5`` and ``true`` stay refused."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Whole = Annotated[int, BeforeValidator(_integral)]
GPU_SLUGS: list[JsonValue] = [slug for slug in sorted(catalog.gpus())]
"""The GPUs the sizing engine knows (``sizing/data/hardware.json``), as the schema's enum."""


def _known_gpu(value: str) -> str:
    if value not in catalog.gpus():
        raise ValueError(f"unknown GPU {value!r}: one of {', '.join(map(str, GPU_SLUGS))}")
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
    cls: type, fields: dict[str, dataclasses.Field[Any]], short_names: dict[str, str]
) -> dict[str, Any]:
    """One schema field per dataclass field of ``cls``: its type, default, limits and
    English description from the field's ``metadata`` (``choices`` become an enum,
    ``gpu`` the catalog's GPUs); a name of ``short_names`` (``context``) is accepted as
    well."""
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
    """A schema that refuses fields it does not declare (422 naming the field), and
    ``NaN`` or ``Infinity`` for a number (422: "Input should be a finite number")."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


SizingFields = create_model(
    "SizingFields",
    __base__=StrictFields,
    __doc__="The workload (``sizing.workload.Workload``); unknown fields are refused.",
    **schema_fields(Workload, FIELDS, SHORT_NAMES),
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


class PlanOut(Schema):
    """The plan's stable JSON contract (keys as in ``docs/cli.md``)."""

    summary: dict[str, Any]


class ErrorOut(Schema):
    """An input that cannot be sized (which one and why), or an unreadable body."""

    field: str | None = None
    detail: str


class ValidationErrorOut(Schema):
    """Request validation errors (django-ninja's format)."""

    detail: list[dict[str, Any]]


def _workload(body: Schema) -> Workload:
    """The body's workload with its own numbers checked (:meth:`Workload.validate`)
    before its model is looked up: a client's error in its own input is a 400 at once,
    not a 503 while the Hub is asked and the same 400 on the retry. The checks that need
    the model (its context limit) follow once it is known.

    Raises:
        SizingError: naming the first field out of range.
    """
    workload = Workload(**{name: getattr(body, name) for name in FIELDS})
    workload.validate()
    return workload


def _plan(body: Schema) -> Plan:
    return plan_create(_workload(body))


class RateLimited(Exception):
    """The client sent more requests than ``settings.RATE_LIMITS["api"]`` allows."""


def _throttle(request: HttpRequest) -> None:
    """Count ``request`` against its client's API limit (fails open without a cache).

    Raises:
        RateLimited: over the limit.
    """
    if rate_limited(request, "api"):
        raise RateLimited


@api.exception_handler(RateLimited)
def too_many(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    """429 with ``Retry-After``, for a client over its rate limit."""
    limit = settings.RATE_LIMITS["api"]
    detail = f"too many requests from this client (at most {limit}); retry later"
    response = api.create_response(request, {"field": None, "detail": detail}, status=429)
    response["Retry-After"] = "60"
    return response


@api.exception_handler(SizingError)
def sizing_error(request: HttpRequest, exc: SizingError) -> HttpResponse:
    """400 naming the input; 503 with ``Retry-After`` while the model is looked up."""
    status = 503 if isinstance(exc, HubLookupPending) else 400
    response = api.create_response(
        request, {"field": exc.field, "detail": exc.message}, status=status
    )
    if status == 503:
        response["Retry-After"] = "2"
    return response


@api.exception_handler(RequestDataTooBig)
def body_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    """A body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``: 413, not Django's 400 page or a trace."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    detail = f"request body is larger than {limit:,} bytes" if limit else str(exc)
    return api.create_response(request, {"field": None, "detail": detail}, status=413)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    """django-ninja's refusals as ``{"field": null, "detail"}``: 400 saying why for a
    body that cannot be read (:class:`BodyRefused`), 415 naming the expected type for a
    body that is not declared JSON, else the status django-ninja gives."""
    cause = exc.__cause__
    if isinstance(cause, BodyRefused):
        return api.create_response(request, {"field": None, "detail": str(cause)}, status=400)
    if isinstance(cause, UnsupportedMediaType):
        got = cause.content_type or "none"
        detail = f"the body must be JSON: send Content-Type: {JSON_TYPE} (got {got})"
        response = api.create_response(request, {"field": None, "detail": detail}, status=415)
        response["Accept-Post"] = JSON_TYPE
        return response
    return api.create_response(request, {"field": None, "detail": str(exc)}, status=exc.status_code)


@api.exception_handler(SuspiciousOperation)
def suspicious_request(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    """Other requests Django refuses to read (too many query fields): a JSON 400."""
    return api.create_response(request, {"field": None, "detail": str(exc)}, status=400)


@api.post(
    "/plans",
    response={
        200: PlanOut,
        400: ErrorOut,
        413: ErrorOut,
        415: ErrorOut,
        422: ValidationErrorOut,
        429: ErrorOut,
        503: ErrorOut,
    },
    summary="Size a workload",
)
def plan_post(request: HttpRequest, body: SizingRequest) -> dict[str, Any]:
    """The sizing plan for a model, a context and a number of users.

    An uncached model is looked up on the Hub in the background: until it is known the
    answer is 503 with ``Retry-After``. Rate-limited per client (429).
    """
    _throttle(request)
    return {"summary": plan_summary(_plan(body))}


@api.get(
    "/bundle",
    response={400: ErrorOut, 422: ValidationErrorOut, 429: ErrorOut, 503: ErrorOut},
    summary="Download the deployment bundle (ZIP)",
    openapi_extra={
        "responses": {
            "200": {
                "description": "The bundle as a ZIP file",
                "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
            }
        }
    },
)
def bundle_get(request: HttpRequest, query: Query[BundleQuery]) -> HttpResponse:
    """Engine configuration for the plan: commands, JSON, YAML, env, numactl, mounts."""
    _throttle(request)
    known = set(BundleQuery.model_fields) | set(SHORT_NAMES.values())
    unknown = [name for name in request.GET if name not in known]
    if unknown:
        errors = [
            {
                "type": "extra_forbidden",
                "loc": ["query", name],
                "msg": "Extra inputs are not permitted",
            }
            for name in unknown
        ]
        return api.create_response(request, {"detail": errors}, status=422)
    try:
        tiers = TierOptions(**{name: getattr(query, name) for name in TIER_FIELDS})
    except SizingError as exc:
        error = {"type": "value_error", "loc": ["query", exc.field], "msg": exc.message}
        return api.create_response(request, {"detail": [error]}, status=422)
    data = bundle_build(plan=_plan(query), engine=query.engine, tiers=tiers)
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="kv-offload-bundle.zip"'
    return response


class RecommendRequest(SizingRequest):
    """A sizing request plus the GPU types to search (default: every priced GPU).

    ``gpu`` and ``gpus_per_node`` are the reference layout the answer is compared with;
    ``kv_dtype`` ``fp8`` allows an FP8 cache where the GPU runs one natively.
    """

    gpus: list[Gpu] = Field(default_factory=list, max_length=64, examples=[["h200-nvl"]])
    top: int = Field(3, ge=1, le=20)


class ConfigurationOut(Schema):
    """One recommended configuration (keys as in ``docs/cli.md``, ``recommend``)."""

    gpu: str
    gpu_name: str
    gpus_per_node: int
    nodes: int
    tensor_parallel_size: int
    replicas: int
    kv_dtype: str
    host_memory_gb: int
    dimm_count: int
    dimm_gb: int
    cpu_tier_gib: float
    conversations_on_gpus: int
    nvme_tb: float
    nvme_drive_count: int
    shared_tier_tb: float
    max_host_memory_gb: int | None = Field(
        None, description="host memory limit searched, GB (null: the plan's own rule)"
    )
    without_shared_tier: bool = Field(False, description="searched without a shared tier")
    without_nvme_tier: bool = Field(False, description="searched without an NVMe tier")
    ttft_p95_ms: float | None
    tpot_ms: float | None
    cpu_hit_rate: float | None
    price_net_eur: str = Field(..., description="net list price, EUR, two decimals")
    relative_cost: float = Field(..., description="price over the cheapest one's")
    meets_targets: bool
    why: str
    why_codes: list[dict[str, Any]]


class DramTradeOut(Schema):
    """The cheapest configuration with a CPU tier against the cheapest without one."""

    with_cpu_tier: ConfigurationOut | None
    without_cpu_tier: ConfigurationOut | None
    saving_eur: str | None


class RecommendationOut(Schema):
    """The cheapest configurations, the Pareto front, and why."""

    configurations: list[ConfigurationOut]
    pareto: list[ConfigurationOut]
    pareto_axis: str
    reference: ConfigurationOut | None
    binding: str | None = Field(None, description="what binds when nothing meets the workload")
    binding_text: str | None = Field(
        None, description="what binds, in the customer's words (e.g. a target with its value)"
    )
    nearest: ConfigurationOut | None
    dram_instead_of_gpus: DramTradeOut
    evaluated: int
    priced_on: str


@api.post(
    "/recommendations",
    response={
        200: RecommendationOut,
        400: ErrorOut,
        413: ErrorOut,
        415: ErrorOut,
        422: ValidationErrorOut,
    },
    summary="Recommend the cheapest configurations",
)
def recommendations_post(request: HttpRequest, body: RecommendRequest) -> dict[str, Any]:
    """The cheapest configurations across GPU types, counts, KV dtype and NVMe tier that
    serve the workload, priced from the price list in force, with the Pareto front."""
    result = recommendation_create(_workload(body), gpus=body.gpus, top=body.top)
    return result.to_json()
