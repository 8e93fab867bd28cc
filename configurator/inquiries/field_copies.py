"""Each form's own copy of its class's fields, made without the generic deep copy.

Django gives every form instance ``copy.deepcopy(base_fields)``. Most fields' and
widgets' ``__deepcopy__`` copies only a few attributes (``Field.__deepcopy__``: a shallow
copy with its own widget, error messages and validators; ``Widget.__deepcopy__``: a
shallow copy with its own ``attrs``), but reaching them through :func:`copy.deepcopy`
costs more than the copies themselves, and the configurator's form is built on every
keystroke. :class:`FieldTemplates` makes the same copies directly for fields and widgets
whose ``__deepcopy__`` is one of those; any other field or widget is deep-copied by its
own ``__deepcopy__`` as before.

A copy's lazily translated help text is the text in the language active when the form
is made (each form lives within one request): read once per language and process, not
once per field and form (Django's bound field reads it to test whether there is one).
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from django import forms
from django.utils.functional import Promise
from django.utils.translation import get_language

from configurator.inquiries.choices import FixedChoiceField, FixedSelect

T = TypeVar("T")

_PLAIN_FIELD_COPIES = frozenset({forms.Field.__deepcopy__, FixedChoiceField.__deepcopy__})
"""``__deepcopy__`` methods that copy a field as ``Field.__deepcopy__`` does."""
_PLAIN_WIDGET_COPIES = frozenset({forms.Widget.__deepcopy__, FixedSelect.__deepcopy__})
"""``__deepcopy__`` methods that copy a widget as ``Widget.__deepcopy__`` does."""


def _shallow(obj: T) -> T:
    """What :func:`copy.copy` makes of a plain object: a new instance sharing the values
    of ``obj``'s attributes."""
    new: T = type(obj).__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    return new


def field_copy(field: forms.Field, memo: dict[int, Any]) -> forms.Field:
    """The copy of ``field`` that ``copy.deepcopy(field, memo)`` makes, made directly when
    the field and its widget copy themselves as Django's ``Field`` and ``Widget`` do."""
    if type(field).__deepcopy__ not in _PLAIN_FIELD_COPIES:
        return copy.deepcopy(field, memo)
    result = _shallow(field)
    memo[id(field)] = result
    widget = field.widget
    if type(widget).__deepcopy__ in _PLAIN_WIDGET_COPIES:
        widget_copy = _shallow(widget)
        widget_copy.attrs = widget.attrs.copy()
        memo[id(widget)] = widget_copy
        result.widget = widget_copy
    else:
        result.widget = copy.deepcopy(widget, memo)
    result.error_messages = field.error_messages.copy()
    result.validators = field.validators[:]
    return result


class FieldTemplates(dict[str, forms.Field]):
    """A form class's ``base_fields`` whose deep copy (a form instance's ``fields``) is a
    plain dict of :func:`field_copy` copies, in the same order, with the lazy help texts
    in the active language (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._help_texts: dict[str | None, dict[str, str]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, forms.Field]:
        language = get_language()
        texts = self._help_texts.get(language)
        if texts is None:
            texts = {
                name: str(field.help_text)
                for name, field in self.items()
                if isinstance(field.help_text, Promise)
            }
            self._help_texts[language] = texts
        fields = {name: field_copy(field, memo) for name, field in self.items()}
        for name, text in texts.items():
            fields[name].help_text = text
        return fields
