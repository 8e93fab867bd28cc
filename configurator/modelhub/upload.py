"""Private models: a ``config.json`` the Hub does not have, sized by the same rules."""

from __future__ import annotations

import math
from typing import Any

from configurator.modelhub.engine_errors import engine_error
from configurator.modelhub.errors import LookupFailure, ModelLookupError
from configurator.uploads import MAX_CONFIG_BYTES as MAX_CONFIG_BYTES
from configurator.uploads import JsonRefused, parse_json
from sizing.errors import SizingError, gettext_noop
from sizing.model.spec import ModelSpec, spec_from_metadata
from sizing.units import GIB

MAX_WEIGHTS_GIB = 100_000.0

JSON_REFUSED = {
    "too_deep": gettext_noop(
        "the config.json is nested too deeply to be a model config (deeper than %(max_depth)s "
        "levels)"
    ),
    "number_too_long": gettext_noop(
        "the config.json holds a number too long to be a model's (%(chars)s characters, at "
        "most %(max_chars)s)"
    ),
}
"""The error of a config.json the JSON reader refuses, by :class:`JsonRefused` code."""


def model_from_config_upload(
    *, config_text: str, model_name: str | None, weights_gib: float | None
) -> ModelSpec:
    """A private model from its ``config.json`` text, sized by the same rules as Hub models.

    Args:
        config_text: the file's text (at most 1 MB).
        model_name: a name for the plan; defaults to the config's ``_name_or_path`` or
            first architecture.
        weights_gib: the checkpoint size in GiB (2^30 bytes); ``None`` derives the weights
            from the parameter count the engine computes from the config.

    Raises:
        ModelLookupError: on field ``config`` (not JSON, not an object, unsupported
            architecture), ``model_name`` or ``weights_gib`` (not a positive size, or
            needed because the engine cannot derive it).
    """
    if len(config_text.encode("utf-8")) > MAX_CONFIG_BYTES:
        raise ModelLookupError(
            LookupFailure.MALFORMED_CONFIG,
            template=gettext_noop(
                "the config.json is larger than %(max_bytes)s bytes: upload the model's "
                "config.json, not its weights"
            ),
            field="config",
            code="upload_too_large",
            values={"max_bytes": MAX_CONFIG_BYTES},
        )
    try:
        config = parse_json(config_text, allow_constants=True)
    except JsonRefused as exc:
        if exc.code == "not_json":
            raise ModelLookupError(
                LookupFailure.MALFORMED_CONFIG,
                template=gettext_noop(
                    "the config.json is not valid JSON: error at line %(line)s, column "
                    "%(column)s (%(detail)s)"
                ),
                field="config",
                code="upload_not_json",
                values={"detail": exc.detail, "line": exc.line, "column": exc.column},
            ) from None
        raise ModelLookupError(
            LookupFailure.MALFORMED_CONFIG,
            template=JSON_REFUSED[exc.code],
            field="config",
            code=f"upload_{exc.code}",
            values=exc.values,
        ) from None
    if not isinstance(config, dict):
        raise ModelLookupError(
            LookupFailure.MALFORMED_CONFIG,
            template=gettext_noop("the config.json must hold a JSON object ({...})"),
            field="config",
            code="upload_not_object",
        )
    key = _non_finite_field(config)
    if key:
        raise ModelLookupError(
            LookupFailure.MALFORMED_CONFIG,
            template=gettext_noop("the config.json gives %(key)s as %(value)s, not a number"),
            field="config",
            code="upload_not_finite",
            values={"key": key, "value": str(_dig(config, key))},
        )
    name = (model_name or "").strip() or _name_from_config(config)
    if len(name) > 200:
        raise ModelLookupError(
            LookupFailure.INVALID_ID,
            template=gettext_noop("the model name must be at most %(max)s characters"),
            field="model_name",
            code="model_name_too_long",
            values={"max": 200},
        )
    checkpoint_bytes = None
    if weights_gib is not None:
        if not math.isfinite(weights_gib) or not 0 < weights_gib <= MAX_WEIGHTS_GIB:
            raise ModelLookupError(
                LookupFailure.WEIGHTS_UNKNOWN,
                template=gettext_noop(
                    "the weights must be above 0 and at most %(max)s GiB, got %(got)s"
                ),
                field="weights_gib",
                code="weights_range",
                values={"max": MAX_WEIGHTS_GIB, "got": weights_gib},
            )
        checkpoint_bytes = round(weights_gib * GIB)
    try:
        return spec_from_metadata(
            name,
            config,
            checkpoint_bytes=checkpoint_bytes,
            source="uploaded config.json",
            checkpoint_source=f"{weights_gib:g} GiB as given" if weights_gib else "",
        )
    except SizingError as exc:
        raise engine_error(exc, model=private_display_name(name), field="config") from exc
    except (TypeError, ValueError) as exc:
        raise ModelLookupError(
            LookupFailure.MALFORMED_CONFIG,
            template=gettext_noop("the config.json is malformed: %(detail)s"),
            field="config",
            code="upload_malformed",
            values={"detail": str(exc)},
        ) from exc


def _non_finite_field(config: dict[str, Any], prefix: str = "") -> str:
    """The dotted key of the first field (of the config or a nested object) whose value is
    ``NaN`` or ``±Infinity``, or ``""``. Such constants inside lists (the Mamba
    ``time_step_limit`` range ``[0.0, Infinity]``) are kept: no sizing rule reads them."""
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, float) and not math.isfinite(value):
            return path
        if isinstance(value, dict):
            found = _non_finite_field(value, f"{path}.")
            if found:
                return found
    return ""


def _dig(config: dict[str, Any], dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = value[part]
    return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(str(value), value)


def _name_from_config(config: dict[str, Any]) -> str:
    path = config.get("_name_or_path")
    if isinstance(path, str) and path.strip():
        return path.strip()[:200]
    archs = config.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        return f"private {archs[0]}"[:200]
    return UNNAMED_PRIVATE_MODEL


UNNAMED_PRIVATE_MODEL = "private model"
"""The name of an upload whose config names neither a path nor an architecture."""


def private_display_name(name: str) -> str:
    """An upload's name for a sentence that already says "private model": without the
    ``private`` prefix of a name derived from the architecture, ``""`` when unnamed."""
    if name == UNNAMED_PRIVATE_MODEL:
        return ""
    return name.removeprefix("private ").strip()
