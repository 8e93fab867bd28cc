"""Sizing and lookup errors worded in the reader's language.

The engine and the model hub raise :class:`sizing.errors.SizingError` with its English
``template`` and the ``values`` that fill it: the CLI and the JSON API print the filled
template (``message``), and the page translates the same template (the German catalog
holds it as a msgid, ``configurator/locale``) and fills it with the numbers formatted
for the active language. The English of an error therefore lives at its raise site
only; an error raised without a template keeps its English message. A lookup error
that wraps an engine error words the engine's sentence as its ``detail`` and the model
as its ``subject`` in the same way. The fixes of an
:class:`~sizing.errors.InfeasibleError` are worded from their templates too and name
the input each one changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.utils.translation import get_language
from django.utils.translation import gettext as _

from configurator.modelhub.engine_errors import subject_template
from configurator.modelhub.errors import ModelLookupError
from configurator.numbers import num, separators
from sizing.errors import Fix, InfeasibleError, SizingError, decimals, scientific, short_number
from sizing.model.config_reader import ASSUMPTIONS

SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _number(key: str, value: float) -> str:
    """``value`` (named ``key``) as the page writes it in the active language: grouped
    with the places of :func:`sizing.errors.decimals` (those of the English message); a
    number the English writes short (:func:`sizing.errors.scientific`) as a power of
    ten (``1,5 × 10³⁰`` in German, ``about 10⁴⁰⁰`` past a float's range)."""
    short = scientific(value)
    if short is None:
        return short_number(value) or num(value, decimals(key, value))
    mantissa, exponent, approximate = short
    power = "10" + str(exponent).translate(SUPERSCRIPTS)
    if approximate:
        return _("about %(number)s") % {"number": power}
    decimal = separators(get_language() or "en")[0]
    return f"{mantissa.replace('.', decimal)}\u00a0×\u00a0{power}"


def _formatted(values: Mapping[str, object]) -> dict[str, str]:
    """Numbers as :func:`_number` writes them, texts as given."""
    return {
        key: _number(key, value)
        if isinstance(value, int | float) and not isinstance(value, bool)
        else str(value)
        for key, value in values.items()
    }


def _subject(values: Mapping[str, object], model: str) -> str:
    """Who the lookup error is about: the Hub id, or the private model (named or not),
    from the template the error's English names it with."""
    if not values.get("private"):
        return str(values.get("model") or model)
    name = str(values.get("model") or "")
    text = _(subject_template(True, name)) % {"name": name}
    return text[:1].upper() + text[1:]


def _sentence(template: str, values: Mapping[str, str]) -> str:
    """An engine clause as a sentence on the page: ``template`` (translated) filled
    with ``values``, a capital first letter when it opens with a plain word or the
    input's name (not a value such as a model id, nor a name such as ``config.json``),
    a full stop."""
    first = template.split(" ", 1)[0]
    if first.isalpha() and first.islower():
        template = template[:1].upper() + template[1:]
    text = template % values
    if template.startswith("%(input)s"):
        text = text[:1].upper() + text[1:]  # the input's name (sizing.inputs.INPUT_ERRORS)
    return text if text.endswith(".") else text + "."


def error_text(exc: SizingError, *, model: str = "") -> str:
    """``exc`` in the active language: its template translated and filled; its English
    ``message`` when it has no template.

    Args:
        exc: an engine or model-hub error.
        model: the model id the customer entered, for lookup errors that do not quote it.
    """
    if not exc.template:
        return exc.message
    values = dict(exc.values)
    if isinstance(exc, ModelLookupError) and exc.cause is not None:
        if exc.code == exc.cause.code:
            # a bad value of the config.json: the page words it as that field's own error
            return error_text(exc.cause, model=model)
        values["detail"] = error_text(exc.cause, model=model)
    if isinstance(exc, ModelLookupError):
        values["subject"] = _subject(values, model)
    if "reason_template" in values:
        # why the Hub gave no answer, a clause of its own template
        values["reason"] = _(str(values["reason_template"])) % _formatted(values)
    if "input" in values:
        # the input an error of its declaration names (sizing.inputs.Input.label)
        values["input"] = _(str(values["input"]))
    values["model"] = values.get("model") or model
    return _sentence(_(exc.template), _formatted(values))


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
