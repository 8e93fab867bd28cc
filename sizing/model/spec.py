"""A model as the sizing engine sees it, and the bundled offline catalog.

The catalog (``sizing/data/models.json``) holds, for popular models, the fields of the
published ``config.json`` the engine needs and the checkpoint size with its source; it
is loaded through the same :func:`spec_from_metadata` path as metadata from the Hub.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, SupportsIndex

from sizing.data_files import data_text
from sizing.errors import SizingError, gettext_noop
from sizing.model.architecture import Architecture
from sizing.model.checkpoint import weight_format, weights_bytes_from_config
from sizing.model.config_reader import from_config

CATALOG_SOURCE = "offline catalog"
"""The :attr:`ModelSpec.source` of a spec from the bundled catalog."""


@dataclass(frozen=True)
class ModelSpec:
    """A model's identity, architecture and weight size.

    Attributes:
        repo_id: the Hugging Face repo id (or a name for a private model).
        config: the parsed ``config.json``.
        architecture: the layer geometry parsed from ``config``.
        weights_bytes: bytes of the weights the engine loads.
        weights_source: where ``weights_bytes`` comes from.
        weight_format: ``bf16``, ``fp8``, ``w4a16``… from ``quantization_config``.
        source: where the metadata came from (catalog, Hub revision, upload).

    A spec is hashable, so the figures derived from it are cached by value
    (:func:`sizing.performance.model_shape`): the hash reads the identity and weight
    fields only, equality compares every field (the config and its geometry too), so two
    uploads of one name with different configs are equal in hash and different keys.
    """

    repo_id: str
    config: Mapping[str, Any] = field(repr=False, hash=False)
    architecture: Architecture = field(repr=False, hash=False)
    weights_bytes: int
    weights_source: str
    weight_format: str
    source: str

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        """A spec equal to the offline catalog's pickles as its repo id (unpickled through
        :func:`from_catalog`), so a cached plan does not carry the catalog's config; any
        other spec pickles whole."""
        if self.source == CATALOG_SOURCE and catalog_key(self.repo_id) == self.repo_id:
            listed = from_catalog(self.repo_id)
            if listed is self or listed == self:
                return (from_catalog, (self.repo_id,))
        return super().__reduce_ex__(protocol)


def spec_from_metadata(
    repo_id: str,
    config: Mapping[str, Any],
    *,
    checkpoint_bytes: int | None,
    total_params: int | None = None,
    source: str,
    checkpoint_source: str = "checkpoint size",
) -> ModelSpec:
    """Build a :class:`ModelSpec` from a config and what is known of the checkpoint.

    Args:
        repo_id: the model's name.
        config: the parsed ``config.json``.
        checkpoint_bytes: the checkpoint's tensor bytes counted once, or ``None``.
        total_params: the parameter count, used when the size is unknown.
        source: where the metadata came from.
        checkpoint_source: where ``checkpoint_bytes`` comes from.

    Raises:
        ConfigError: if the config lacks a field the architecture needs, or neither
            the checkpoint size nor the parameter count is known.
    """
    arch = from_config(config)
    fmt = weight_format(config)
    if checkpoint_bytes:
        weights, wsource = int(checkpoint_bytes), checkpoint_source
    else:
        weights = weights_bytes_from_config(config, fmt, total_params)
        count = (
            f"{int(total_params):,} parameters"
            if total_params
            else "parameters counted from config.json"
        )
        wsource = f"{count} × {fmt} bits per weight (embeddings, vision tower at 16 bit)"
    return ModelSpec(
        repo_id=repo_id,
        config=config,
        architecture=arch,
        weights_bytes=weights,
        weights_source=wsource,
        weight_format=fmt,
        source=source,
    )


@cache
def _catalog() -> dict[str, Any]:
    text = data_text("models.json")
    data: dict[str, Any] = json.loads(text)["models"]
    return data


def catalog_ids() -> tuple[str, ...]:
    """Repo ids in the offline catalog, sorted."""
    return tuple(sorted(_catalog()))


def catalog_key(repo_id: str) -> str | None:
    """The catalog's own spelling of ``repo_id`` (the Hub's canonical id, matched
    case-insensitively as the Hub matches it), or ``None`` when it is not listed."""
    entries = _catalog()
    if repo_id in entries:
        return repo_id
    return {k.lower(): k for k in entries}.get(repo_id.lower())


def catalog_entry(repo_id: str) -> Mapping[str, Any] | None:
    """The raw catalog entry for ``repo_id`` (case-insensitive), or ``None``."""
    key = catalog_key(repo_id)
    return _catalog()[key] if key else None


@lru_cache(maxsize=256)
def from_catalog(repo_id: str) -> ModelSpec:
    """The offline catalog's :class:`ModelSpec` for ``repo_id``, under the catalog's
    canonical id (``qwen/qwen3-32b-fp8`` is sized and shown as ``Qwen/Qwen3-32B-FP8``).

    The catalog is bundled data, so each spec is parsed once per process and shared;
    like every spec it is frozen, and its ``config`` must be treated as read-only.

    Raises:
        SizingError: on field ``model`` when the model is not in the catalog.
    """
    key = catalog_key(repo_id)
    if key is None:
        raise SizingError(
            "model",
            template=gettext_noop("model %(model)r is not in the offline catalog"),
            code="model_not_in_catalog",
            values={"model": repo_id},
        )
    entry = _catalog()[key]
    return spec_from_metadata(
        key,
        entry["config"],
        checkpoint_bytes=entry.get("checkpoint_bytes"),
        total_params=entry.get("total_params"),
        source=CATALOG_SOURCE,
        checkpoint_source=entry.get("checkpoint_source") or CATALOG_SOURCE,
    )
