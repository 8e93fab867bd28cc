"""The JSON API (OpenAPI at ``/api/docs``): size a workload, download its bundle.

Its requests are :mod:`configurator.deployments.api_requests`, its answers
:mod:`configurator.deployments.api_responses`; this module holds the endpoints and how
each error is answered.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Query, Schema
from ninja.errors import HttpError, ValidationError, ValidationErrorContext
from pydantic_core import ErrorDetails

from configurator.clients import rate_limited
from configurator.deployments.api_body import (
    JSON_TYPE,
    BodyRefused,
    UnsupportedMediaType,
    WorkloadParser,
)
from configurator.deployments.api_docs import LocalSwagger
from configurator.deployments.api_errors import ErrorOut, error_response, input_error_response
from configurator.deployments.api_requests import BundleQuery, RecommendRequest, SizingRequest
from configurator.deployments.api_responses import PlanOut, RecommendationOut
from configurator.deployments.services import bundle_build
from configurator.modelhub.errors import HubLookupPending
from configurator.planning.recommend import recommendation_create
from configurator.planning.services import plan_create
from sizing.bom.lines import check_node_fits
from sizing.engines.shared_tier import TIER_FIELDS, TierOptions
from sizing.errors import SizingError
from sizing.inputs import INPUT_ERRORS
from sizing.plan.orchestrator import Plan
from sizing.summary import plan_summary
from sizing.workload import FIELDS, INPUTS, LEGACY_NAMES, SHORT_NAMES, Workload


def _input_error(item: ErrorDetails) -> SizingError:
    """A pydantic error of the request (``loc``, ``type``, ``msg``, ``ctx``) as the
    error on the input it locates: the input's own when its declaration refused the
    value (:func:`configurator.deployments.api_requests.declared_check`), else the
    sentence of :data:`sizing.inputs.INPUT_ERRORS` for a missing or unknown field, or
    pydantic's, naming the field."""
    path = [str(part) for part in item["loc"][1:]]
    if len(path) > 1 and path[0] in ("body", "query"):
        path = path[1:]  # the view parameter's name: the whole request
    field = ".".join(path)
    cause = item.get("ctx", {}).get("error")
    if isinstance(cause, SizingError):
        if cause.field == (LEGACY_NAMES.get(path[0], path[0]) if path else ""):
            return cause  # the input's declaration refused it
        return SizingError(field, cause.message, code=cause.code)  # an item of a list
    kind = str(item["type"])
    if kind == "missing" and field in INPUTS:
        return INPUTS[field].error("required")
    if kind in ("missing", "extra_forbidden"):
        code = "required" if kind == "missing" else "unknown"
        return SizingError(field, template=INPUT_ERRORS[code], code=code, values={"input": field})
    message = str(item["msg"]).removeprefix("Value error, ")
    return SizingError(field, f"{field}: {message}" if field else message, code=kind)


class SizingApi(NinjaAPI):
    """The API; a request the schema refuses is answered in the one error shape
    (:mod:`configurator.deployments.api_errors`), naming the first input refused."""

    def validation_error_from_error_contexts(
        self, error_contexts: list[ValidationErrorContext[Any]]
    ) -> ValidationError:
        errors = [
            {"error": _input_error(item)}
            for context in error_contexts
            for item in context.pydantic_validation_error.errors(include_url=False)
        ]
        return ValidationError(errors)


api = SizingApi(
    parser=WorkloadParser(),
    title="KV-offload configurator",
    version="1",
    description="Sizing plans and deployment bundles for KV-cache offloading.",
    urls_namespace="api",
    docs=LocalSwagger(),
)


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
    """The body's plan, on a node that fits its chassis (:func:`sizing.bom.lines.
    check_node_fits`: slots, bays and baseboard); a card the chassis does not take is sized
    all the same and the summary says the node is not sold (``node_buildable``), while the
    page, the quote and the recommender refuse it at its field.

    Raises:
        SizingError: naming the input that cannot be sized or built.
    """
    plan = plan_create(_workload(body))
    check_node_fits(plan)
    return plan


class RateLimited(Exception):
    """The client sent more requests than ``settings.RATE_LIMITS["api"]`` allows."""


def _throttle(request: HttpRequest) -> None:
    """Count ``request`` against its client's API limit (fails open without a cache).

    Raises:
        RateLimited: over the limit.
    """
    if rate_limited(request, "api"):
        raise RateLimited


@api.exception_handler(ValidationError)
def request_refused(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    """400 naming the first input the schema or its declaration refuses."""
    return input_error_response(exc.errors[0]["error"])


@api.exception_handler(RateLimited)
def too_many(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    """429 with ``Retry-After``, for a client over its rate limit."""
    limit = settings.RATE_LIMITS["api"]
    detail = f"too many requests from this client (at most {limit}); retry later"
    return error_response(
        field=None, code="rate_limited", detail=detail, status=429, headers={"Retry-After": "60"}
    )


@api.exception_handler(SizingError)
def sizing_error(request: HttpRequest, exc: SizingError) -> HttpResponse:
    """400 naming the input; 503 with ``Retry-After`` while the model is looked up."""
    if isinstance(exc, HubLookupPending):
        return input_error_response(exc, status=503, headers={"Retry-After": "2"})
    return input_error_response(exc)


@api.exception_handler(RequestDataTooBig)
def body_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    """A body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``: 413, not Django's 400 page or a trace."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    detail = f"request body is larger than {limit:,} bytes" if limit else str(exc)
    return error_response(field=None, code="body_too_large", detail=detail, status=413)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    """django-ninja's refusals in the one error shape: 400 saying why for a body that
    cannot be read (:class:`BodyRefused`), 415 naming the expected type for a body that
    is not declared JSON, else the status django-ninja gives."""
    cause = exc.__cause__
    if isinstance(cause, BodyRefused):
        return error_response(field=None, code="body_unreadable", detail=str(cause), status=400)
    if isinstance(cause, UnsupportedMediaType):
        got = cause.content_type or "none"
        detail = f"the body must be JSON: send Content-Type: {JSON_TYPE} (got {got})"
        return error_response(
            field=None,
            code="unsupported_media_type",
            detail=detail,
            status=415,
            headers={"Accept-Post": JSON_TYPE},
        )
    return error_response(
        field=None, code="request_refused", detail=str(exc), status=exc.status_code
    )


@api.exception_handler(SuspiciousOperation)
def suspicious_request(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    """Other requests Django refuses to read (too many query fields): a JSON 400."""
    return error_response(field=None, code="request_refused", detail=str(exc), status=400)


@api.post(
    "/plans",
    response={
        200: PlanOut,
        400: ErrorOut,
        413: ErrorOut,
        415: ErrorOut,
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
    response={400: ErrorOut, 429: ErrorOut, 503: ErrorOut},
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
    for name in request.GET:
        if name not in known:
            values = {"input": name}
            raise SizingError(name, template=INPUT_ERRORS["unknown"], code="unknown", values=values)
    tiers = TierOptions(**{name: getattr(query, name) for name in TIER_FIELDS})
    data = bundle_build(plan=_plan(query), engine=query.engine, tiers=tiers)
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="kv-offload-bundle.zip"'
    return response


@api.post(
    "/recommendations",
    response={
        200: RecommendationOut,
        400: ErrorOut,
        413: ErrorOut,
        415: ErrorOut,
    },
    summary="Recommend the cheapest configurations",
)
def recommendations_post(request: HttpRequest, body: RecommendRequest) -> dict[str, Any]:
    """The cheapest configurations across GPU types, counts, KV dtype and NVMe tier that
    serve the workload, priced from the price list in force, with the Pareto front."""
    result = recommendation_create(_workload(body), gpus=body.gpus, top=body.top)
    return result.to_json()
