"""Resolve a model id to a :class:`sizing.model.spec.ModelSpec`: catalog, cache, then the Hub.

Order of the sources (``docs/models.md``):

1. the offline catalog bundled with the sizing engine, for a catalog id without an
   explicit revision: no database, no network;
2. the database cache of earlier Hub lookups, keyed by repo id and requested revision
   (an explicit revision skips the catalog and is looked up here, or by its commit);
3. the Hugging Face Hub through ``huggingface_hub`` (unless ``HF_HUB_OFFLINE``), with a
   deadline of ``HF_TIMEOUT_SECONDS``; the answer is cached once the engine accepted it.
   Web requests do not wait for it: the lookup runs in the background and the request
   gets :class:`HubLookupPending` (:mod:`configurator.modelhub.background`). A failed
   lookup is remembered for a while and answers repeats at once.

When the Hub is off, unreachable or slow, an earlier cached revision of the same repo or
the catalog entry answers, and :class:`ResolvedModel` carries a notice saying so.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Q, QuerySet
from django.utils import formats

from configurator.modelhub import background
from configurator.modelhub.engine_errors import engine_error
from configurator.modelhub.errors import (
    HubLookupPending,
    HubUnreachableError,
    LookupFailure,
    ModelLookupError,
)
from configurator.modelhub.models import HubModel
from configurator.modelhub.repo_ids import validate_repo_id, validate_revision
from configurator.uploads import json_storable
from sizing.errors import SizingError, gettext_noop
from sizing.model.spec import ModelSpec, catalog_entry, from_catalog, spec_from_metadata

if TYPE_CHECKING:
    from configurator.modelhub.hub import HubMetadata

COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResolvedModel:
    """A resolved model and how it was found.

    Attributes:
        spec: what the sizing engine needs.
        origin: ``catalog``, ``cache``, ``hub`` or ``upload``.
        notice: a sentence for the page when the answer is a fallback, else ``""``.
        sha: the Hub commit the metadata belongs to (``""`` for the catalog).
        gated: the Hub's gating mode, ``""`` when open or unknown.
        license: the model card's license id, ``""`` when unknown.
    """

    spec: ModelSpec
    origin: str
    notice: str = ""
    sha: str = ""
    gated: str = ""
    license: str = ""


def model_resolve(repo_id: str, *, revision: str | None = None) -> ModelSpec:
    """The model spec for ``repo_id`` (see :func:`model_lookup` for the sources).

    Raises:
        SizingError: on field ``model`` when the id is malformed or cannot be sized.
    """
    return model_lookup(repo_id, revision=revision).spec


def model_lookup(repo_id: str, *, revision: str | None = None) -> ResolvedModel:
    """Resolve ``repo_id`` at ``revision`` from the catalog, the cache or the Hub.

    Contacts only ``settings.HF_ENDPOINT``, never when ``HF_HUB_OFFLINE`` is set, and
    waits at most ``HF_TIMEOUT_SECONDS`` for it; within a web request not at all.

    Raises:
        ModelLookupError: on field ``model``: malformed id, not found, gated without
            access, revision not found, GGUF only, not a text-generation model,
            unsupported or malformed config, or no source answers; remembered
            failures are raised again without contacting the Hub.
        HubLookupPending: within a web request, the lookup has started (or runs) in the
            background; ask again shortly.
    """
    value = validate_repo_id(repo_id)
    rev = validate_revision(revision)
    if rev is None and catalog_entry(value) is not None:
        return ResolvedModel(spec=from_catalog(value), origin="catalog")
    row = _cached_row(value, rev)
    if row is not None:
        return _from_row(row, origin="cache")
    if settings.HF_HUB_OFFLINE:
        offline = HubUnreachableError(
            gettext_noop("this installation does not contact the Hugging Face Hub (HF_HUB_OFFLINE)")
        )
        return _fallback(value, rev, failure=offline, kind=LookupFailure.OFFLINE)
    # huggingface_hub is imported only when the Hub is really asked (a catalog model,
    # a cached one and offline mode never need it).
    from configurator.modelhub.hub import HubClient, fetch_with_deadline

    client = HubClient(
        endpoint=str(settings.HF_ENDPOINT),
        token=settings.HF_TOKEN,
        timeout_s=float(settings.HF_TIMEOUT_SECONDS),
    )
    key = background.lookup_key(client, value, rev)
    failure = background.remembered_failure(key)
    if isinstance(failure, HubUnreachableError):
        return _fallback(value, rev, failure=failure, kind=LookupFailure.UNREACHABLE)
    if failure is not None:
        raise failure
    if background.in_background():
        answer = background.take_answer(key)
        if answer is None:
            background.start(key, value, revision=rev, client=client)
            raise HubLookupPending(value)
        meta = answer
    else:
        try:
            meta = fetch_with_deadline(value, revision=rev, client=client)
        except HubUnreachableError as exc:
            background.remember_failure(key, exc)
            return _fallback(value, rev, failure=exc, kind=LookupFailure.UNREACHABLE)
        except ModelLookupError as exc:
            background.remember_failure(key, exc)
            raise
    try:
        spec = _spec(meta)
    except ModelLookupError as exc:
        background.remember_failure(key, exc)
        raise
    _store(meta, repo_key=value.lower(), revision=rev)
    return ResolvedModel(
        spec=spec, origin="hub", sha=meta.sha, gated=meta.gated, license=meta.license
    )


def _cached_row(repo_id: str, revision: str | None) -> HubModel | None:
    rows = HubModel.objects.filter(repo_key=repo_id.lower())
    if revision is not None and COMMIT_RE.match(revision):
        rows = rows.filter(Q(revision=revision) | Q(sha=revision))
    else:
        rows = rows.filter(revision=revision or "")
    return _first_or_none(rows)


def _first_or_none(rows: QuerySet[HubModel]) -> HubModel | None:
    """The first cached row; none when the cache table does not exist yet.

    The CLI runs on machines whose database was never migrated; there the cache is
    empty rather than an error.
    """
    try:
        return rows.first()
    except DatabaseError as exc:
        logger.info("model cache unavailable (%s); run manage.py migrate", exc)
        return None


def _from_row(row: HubModel, *, origin: str, notice: str = "") -> ResolvedModel:
    spec = _spec(row)
    return ResolvedModel(
        spec=spec, origin=origin, notice=notice, sha=row.sha, gated=row.gated, license=row.license
    )


UNKNOWN_MODEL = {
    LookupFailure.OFFLINE: gettext_noop(
        "unknown model %(model)r: it is neither in the offline catalog nor in the cache, and "
        "%(reason)s; pick a catalog model or upload its config.json"
    ),
    LookupFailure.UNREACHABLE: gettext_noop(
        "unknown model %(model)r: it is neither in the offline catalog nor in the cache, and "
        "%(reason)s; try again later, pick a catalog model or upload its config.json"
    ),
}
"""The error of a model no source has, by why the Hub gave no answer; ``reason`` is the
:class:`HubUnreachableError` clause (its template in ``reason_template``)."""


def _fallback(
    repo_id: str, revision: str | None, *, failure: HubUnreachableError, kind: LookupFailure
) -> ResolvedModel:
    """An earlier cached revision or the catalog entry, with a notice; else an error."""
    reason = str(failure)
    row = _first_or_none(HubModel.objects.for_repo(repo_id))
    asked = f" at revision '{revision}'" if revision else ""
    if row is not None:
        when = formats.date_format(row.fetched_at, "SHORT_DATE_FORMAT")
        notice = (
            f"{reason[:1].upper()}{reason[1:]}; {repo_id}{asked} is sized with the "
            f"copy of commit {row.sha[:12]} cached on {when}."
        )
        return _from_row(row, origin="cache", notice=notice)
    if catalog_entry(repo_id) is not None:
        notice = (
            f"{reason[:1].upper()}{reason[1:]}; {repo_id}{asked} is sized with the "
            "offline catalog's entry."
        )
        return ResolvedModel(spec=from_catalog(repo_id), origin="catalog", notice=notice)
    raise ModelLookupError(
        kind,
        template=UNKNOWN_MODEL[kind],
        code=f"unknown_model_{kind.value}",
        values={
            "model": repo_id,
            "reason": reason,
            "reason_template": failure.template,
            **failure.values,
        },
    )


def _spec(found: HubModel | HubMetadata) -> ModelSpec:
    """Build the spec from Hub metadata (fetched now or cached); engine errors become
    lookup errors on ``model``."""
    repo_id = found.repo_id
    try:
        return spec_from_metadata(
            repo_id,
            found.config,
            checkpoint_bytes=found.checkpoint_bytes,
            total_params=found.total_params,
            source=f"Hugging Face Hub, commit {found.sha[:12]}",
            checkpoint_source=found.checkpoint_source or "Hugging Face Hub",
        )
    except SizingError as exc:
        raise engine_error(exc, model=repo_id, field="model") from exc
    except (TypeError, ValueError) as exc:
        raise ModelLookupError(
            LookupFailure.MALFORMED_CONFIG,
            template=gettext_noop("the config.json of %(model)s is malformed: %(detail)s"),
            values={"model": repo_id, "detail": str(exc)},
        ) from exc


def _store(meta: HubMetadata, *, repo_key: str, revision: str | None) -> None:
    try:
        _write(meta, repo_key=repo_key, revision=revision)
    except DatabaseError as exc:
        logger.info("model cache unavailable (%s); run manage.py migrate", exc)


def _write(meta: HubMetadata, *, repo_key: str, revision: str | None) -> HubModel:
    row, _created = HubModel.objects.update_or_create(
        repo_key=repo_key,
        revision=revision or "",
        defaults={
            "repo_id": meta.repo_id,
            "sha": meta.sha,
            "config": json_storable(meta.config),
            "checkpoint_bytes": meta.checkpoint_bytes,
            "checkpoint_source": meta.checkpoint_source[:200],
            "total_params": meta.total_params,
            "gated": meta.gated,
            "license": meta.license[:100],
            "pipeline_tag": meta.pipeline_tag[:64],
        },
    )
    return row
