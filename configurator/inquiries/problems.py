"""Sizing and lookup errors worded in the reader's language.

The engine and the model hub raise :class:`sizing.errors.SizingError` with an English
``message`` (for the CLI and the JSON API) and, where they know the case, a ``code``
with its numbers. An error that carries its English ``template`` (the workload's
limits, :meth:`sizing.workload.Workload.validate`) is worded by translating that
template (the German catalog holds it as a msgid), so its English lives in the engine
only; the other known codes are worded by :data:`MESSAGES`. Both are filled with the
numbers formatted for the active language (German or English, ``configurator/locale``);
a code worded neither way falls back to the English message. The fixes of an
:class:`~sizing.errors.InfeasibleError` are worded the same way and name the input
each one changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from configurator.inquiries.notices import TIMEOUT_PHRASE, seconds_text
from configurator.modelhub.errors import ModelLookupError
from configurator.numbers import num
from sizing.architecture import ASSUMPTIONS
from sizing.errors import Fix, InfeasibleError, SizingError, decimals

MESSAGES: dict[str, Promise] = {
    "lookup_pending": gettext_lazy(
        "%(model)s is being looked up on the Hugging Face Hub; try again in a few seconds."
    ),
    # model lookups (configurator.modelhub)
    "invalid_id": gettext_lazy(
        "%(model)s is not a Hugging Face model id of the form owner/name (for example "
        "Qwen/Qwen3-32B-FP8)."
    ),
    "invalid_revision": gettext_lazy(
        "%(revision)s is not a revision: give a branch, tag or 40-digit commit."
    ),
    "unknown_model_offline": gettext_lazy(
        "Unknown model %(model)s: it is neither in the offline catalog nor in the cache, and "
        "this installation does not contact the Hugging Face Hub; pick a catalog model or "
        "upload its config.json."
    ),
    "unknown_model_unreachable": gettext_lazy(
        "Unknown model %(model)s: it is neither in the offline catalog nor in the cache, and "
        "the Hugging Face Hub could not be reached; try again later, pick a catalog model or "
        "upload its config.json."
    ),
    "unknown_model_timeout": gettext_lazy(
        "Unknown model %(model)s: it is neither in the offline catalog nor in the cache, and "
        "the Hugging Face Hub did not answer within %(seconds)s s; try again later, pick a "
        "catalog model or upload its config.json."
    ),
    "not_found": gettext_lazy(
        "%(model)s was not found on the Hugging Face Hub: check the spelling (owner/name), or "
        "upload its config.json if it is a private model."
    ),
    "gated": gettext_lazy(
        "%(model)s is gated: its files are only shared with accounts that accepted its "
        "license. Pick a model from the offline catalog, upload its config.json, or ask the "
        "operator to set HF_TOKEN to a token of an account with access."
    ),
    "revision_not_found": gettext_lazy(
        "%(model)s has no such revision: give a branch, tag or commit of that repo."
    ),
    "not_text_generation": gettext_lazy(
        "%(model)s is not a text-generation model that vLLM or SGLang can serve, so it keeps "
        "no KV cache to offload."
    ),
    "gguf_only": gettext_lazy(
        "%(model)s holds only GGUF files, which llama.cpp runs; the serving engines sized here "
        "load the original safetensors checkpoint: enter the repo the GGUF was converted from."
    ),
    "malformed_config": gettext_lazy("The config.json of %(model)s is malformed."),
    "weights_unknown": gettext_lazy(
        "%(subject)s: the weight size is unknown (no safetensors index, file sizes or "
        "parameter count); give the weights in GiB."
    ),
    "unsupported_architecture": gettext_lazy(
        "%(subject)s is not a text-generation architecture that can be sized: %(detail)s"
    ),
    "engine_error": gettext_lazy("%(subject)s: %(detail)s"),
    "upload_too_large": gettext_lazy(
        "The config.json is larger than %(max_bytes)s bytes: upload the model's config.json, "
        "not its weights."
    ),
    "upload_not_json": gettext_lazy(
        "The config.json is not valid JSON: error at line %(line)s, column %(column)s (%(detail)s)."
    ),
    "upload_too_deep": gettext_lazy(
        "The config.json is nested too deeply to be a model config (%(detail)s)."
    ),
    "upload_number_too_long": gettext_lazy(
        "The config.json holds a number too long to be a model's (%(detail)s)."
    ),
    "upload_not_object": gettext_lazy("The config.json must hold a JSON object ({...})."),
    "model_name_too_long": gettext_lazy("The model name must be at most %(max)s characters."),
    "weights_range": gettext_lazy("The weights must be between 0 and %(max)s GiB, got %(got)s."),
    "upload_malformed": gettext_lazy("The config.json is malformed: %(detail)s"),
}
"""The sentence of each error code, with its values as ``%(name)s``."""


def _formatted(values: Mapping[str, Any]) -> dict[str, str]:
    """Numbers grouped, with the decimal separator of the active language and the
    places of :func:`sizing.errors.decimals` (those of the English message)."""
    return {
        key: num(value, decimals(key, value))
        if isinstance(value, int | float) and not isinstance(value, bool)
        else str(value)
        for key, value in values.items()
    }


def _subject(values: Mapping[str, Any], model: str) -> str:
    """Who the lookup error is about: the Hub id, or the private model (named or not)."""
    if values.get("private"):
        name = values.get("model") or ""
        if name:
            return _("Private model %(name)s") % {"name": name}
        return _("The uploaded config.json")
    return str(values.get("model") or model)


def _sentence(template: str, values: Mapping[str, str]) -> str:
    """An engine clause as a sentence on the page: ``template`` (translated) filled
    with ``values``, a capital first letter when it opens with a plain word (not a
    value such as a model id, nor a name such as ``config.json``), a full stop."""
    first = template.split(" ", 1)[0]
    if first.isalpha() and first.islower():
        template = template[:1].upper() + template[1:]
    text = template % values
    return text if text.endswith(".") else text + "."


def _worded(exc: SizingError, code: str, extra: Mapping[str, str]) -> str | None:
    """The error in the active language: its own template translated, else the
    :data:`MESSAGES` sentence of ``code``; ``None`` when neither words it."""
    values = {**_formatted(dict(exc.values)), **extra}
    try:
        if exc.template:
            return _sentence(_(exc.template), values)
        template = MESSAGES.get(code)
        return None if template is None else str(template) % values
    except (KeyError, TypeError, ValueError):
        return None


def error_text(exc: SizingError, *, model: str = "") -> str:
    """``exc`` in the active language; its English ``message`` when the code is unknown.

    Args:
        exc: an engine or model-hub error.
        model: the model id the customer entered, for lookup errors that do not quote it.
    """
    values = dict(exc.values)
    extra: dict[str, str] = {"model": str(values.get("model") or model)}
    code = exc.code
    if code == "unknown_model_unreachable" and TIMEOUT_PHRASE in str(values.get("reason")):
        code = "unknown_model_timeout"
        extra["seconds"] = seconds_text(settings.HF_TIMEOUT_SECONDS)
    if isinstance(exc, ModelLookupError) and exc.cause is not None and code == exc.cause.code:
        # a bad value of the config.json: the page words it as that field's own error
        return error_text(exc.cause, model=model)
    if isinstance(exc, ModelLookupError):
        extra["subject"] = _subject(values, model)
        if exc.cause is not None:
            extra["detail"] = error_text(exc.cause, model=model)
        elif "detail" in values:
            extra["detail"] = str(values["detail"])
    return _worded(exc, code, extra) or exc.message


@dataclass(frozen=True)
class FixView:
    """One fix of an infeasible request: the form field it changes (``""`` when not
    known), that field's label, and what to change."""

    field: str
    text: str
    label: str = ""


def fix_text(fix: Fix) -> str:
    """``fix`` in the active language: its English template translated and filled."""
    return _(fix.template) % _formatted(dict(fix.values))


def fix_views(exc: SizingError, field_of: Callable[[str], tuple[str, str]]) -> list[FixView]:
    """The fixes of an infeasible request, each at the form field ``field_of`` names.

    ``field_of`` maps an engine field (``context``, ``gpus_per_node``) to a form field's
    name and label.
    """
    if not isinstance(exc, InfeasibleError):
        return []
    if not exc.fix_notes:
        return [FixView(field="", text=text) for text in exc.fixes]
    views = []
    for fix in exc.fix_notes:
        field, label = field_of(fix.field)
        views.append(FixView(field=field, text=fix_text(fix), label=label))
    return views


def fixing_inputs(labels: list[str]) -> str:
    """The sentence naming the inputs that would fix an infeasible request."""
    unique = list(dict.fromkeys(labels))
    return _("Inputs that would fix it: %(inputs)s.") % {"inputs": ", ".join(unique)}


def assumption_texts(codes: tuple[str, ...]) -> list[str]:
    """The defaults a config relied on, in the active language."""
    return [_sentence(_(ASSUMPTIONS[code]), {}) for code in codes]
