"""The sizing engine's error about a model's config.json as a lookup error about that
model (a Hub id, or an uploaded private model), and whom such an error names."""

from __future__ import annotations

from configurator.modelhub.errors import LookupFailure, ModelLookupError
from sizing.errors import ConfigError, SizingError, Value, gettext_noop

VALUE_ERROR_CODES = frozenset(
    {
        "config_out_of_range",
        "config_not_positive_int",
        "config_not_non_negative_int",
        "config_not_whole_number",
        "config_kv_heads_indivisible",
    }
)
"""Engine codes for a bad value in a config.json (``sizing.model.config_bounds``,
``sizing.model.config_reader``): reported as themselves, never as an unsupported architecture."""


PRIVATE_MODEL = gettext_noop("the private model %(name)s")
UNNAMED_PRIVATE_MODEL = gettext_noop("the private model")
"""Who an error about an upload is about: a named private model, or an unnamed one."""

SUBJECT_DETAIL = gettext_noop("%(subject)s: %(detail)s")
"""An engine error about a model: whom it is about, then the engine's sentence."""


def subject_template(private: bool, name: str) -> str:
    """The English template naming the model an error is about: ``%(name)s`` alone for a
    Hub model, :data:`PRIVATE_MODEL` or :data:`UNNAMED_PRIVATE_MODEL` for an upload."""
    if not private:
        return "%(name)s"
    return PRIVATE_MODEL if name else UNNAMED_PRIVATE_MODEL


def engine_error(exc: SizingError, *, model: str, field: str) -> ModelLookupError:
    """The engine's error as a lookup error about ``model`` (the Hub id, or the name of
    an upload, ``""`` when it has none).

    ``values`` name the model, whether it is an upload (``private`` 1 or 0), the
    ``subject`` in English (:func:`subject_template`) and the engine's sentence as
    ``detail``; the engine's own error is the ``cause``. A bad value
    (:data:`VALUE_ERROR_CODES`) keeps the engine's code and values, so that a page words
    it as that field's error.
    """
    private = field == "config"
    subject = subject_template(private, model) % {"name": model}
    values: dict[str, Value] = {
        "model": model,
        "private": int(private),
        "subject": subject,
        "detail": exc.message,
    }
    if exc.field == "weights":
        return ModelLookupError(
            LookupFailure.WEIGHTS_UNKNOWN,
            template=gettext_noop(
                "%(subject)s: the weight size is unknown (no safetensors index, file sizes or "
                "parameter count); give the weights in GiB"
            ),
            field="weights_gib" if private else field,
            values=values,
            cause=exc,
        )
    if exc.code in VALUE_ERROR_CODES:
        return ModelLookupError(
            LookupFailure.MALFORMED_CONFIG,
            template=SUBJECT_DETAIL,
            field=field,
            code=exc.code,
            values={**dict(exc.values), **values},
            cause=exc,
        )
    if isinstance(exc, ConfigError):
        return ModelLookupError(
            LookupFailure.UNSUPPORTED_ARCHITECTURE,
            template=gettext_noop(
                "%(subject)s is not a text-generation architecture the engine can size: %(detail)s"
            ),
            field=field,
            values=values,
            cause=exc,
        )
    return ModelLookupError(
        LookupFailure.MALFORMED_CONFIG,
        template=SUBJECT_DETAIL,
        field=field,
        code="engine_error",
        values=values,
        cause=exc,
    )
