"""Each form's own copy of its class's fields, made without the generic deep copy and
only for the fields the form hands out.

Django gives every form instance ``copy.deepcopy(base_fields)``. Most fields' and
widgets' ``__deepcopy__`` copies only a few attributes (``Field.__deepcopy__``: a shallow
copy with its own widget, error messages and validators; ``Widget.__deepcopy__``: a
shallow copy with its own ``attrs``), but reaching them through :func:`copy.deepcopy`
costs more than the copies themselves, and the configurator's form is built on every
keystroke. :class:`FieldTemplates` makes the same copies directly for fields and widgets
whose ``__deepcopy__`` is one of those; any other field or widget is deep-copied by its
own ``__deepcopy__`` as before.

A form's ``fields`` (:class:`FieldCopies`) copies a field when it is first read from
it: a form whose fields are only cleaned (the live estimate) reads the class's field
through :meth:`FieldCopies.current`, which is what the copy would be, and copies none.

A copy's lazily translated help text is the text in the language active when the form
is made (each form lives within one request): read once per language and process, not
once per field and form (Django's bound field reads it to test whether there is one).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, MutableMapping
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


class FieldCopies(MutableMapping[str, forms.Field]):
    """A form's ``fields``: the class's fields in their order, each copied (with its help
    text in the form's language) when first read, and any field set on the form.

    :meth:`current` answers without copying; reading, iterating the values or items, or
    setting a field behaves as on the plain dict of copies Django makes.
    """

    __slots__ = ("_fields", "_help_texts", "_templates")

    def __init__(self, templates: dict[str, forms.Field], help_texts: dict[str, str]) -> None:
        self._templates = templates
        self._help_texts = help_texts
        # each name's own copy, or None while the field is the class's unread one
        self._fields: dict[str, forms.Field | None] = dict.fromkeys(templates)

    def __getitem__(self, name: str) -> forms.Field:
        field = self._fields[name]
        if field is None:
            field = field_copy(self._templates[name], {})
            text = self._help_texts.get(name)
            if text is not None:
                field.help_text = text
            self._fields[name] = field
        return field

    def current(self, name: str) -> forms.Field:
        """The field ``name`` as the form has it now, without copying: its own copy once
        made or set, else the class's field (equal to that copy but for a lazy help
        text). For reading only.

        Raises:
            KeyError: the form has no field ``name``.
        """
        field = self._fields[name]
        return self._templates[name] if field is None else field

    def __setitem__(self, name: str, field: forms.Field) -> None:
        self._fields[name] = field

    def __delitem__(self, name: str) -> None:
        del self._fields[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._fields)})"


class FieldTemplates(dict[str, forms.Field]):
    """A form class's ``base_fields`` whose deep copy (a form instance's ``fields``) is a
    :class:`FieldCopies` of them, in the same order, with the lazy help texts in the
    active language (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._help_texts: dict[str | None, dict[str, str]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> FieldCopies:
        language = get_language()
        texts = self._help_texts.get(language)
        if texts is None:
            texts = {
                name: str(field.help_text)
                for name, field in self.items()
                if isinstance(field.help_text, Promise)
            }
            self._help_texts[language] = texts
        return FieldCopies(self, texts)


_PLAIN_BOUND_CLEAN = forms.Field._clean_bound_field  # type: ignore[attr-defined]
"""How most fields clean a bound field's value: ``clean(bf.data)`` (``FileField`` passes
the initial value too)."""


class CopiedFieldsForm(forms.BaseForm):
    """A form whose ``fields`` are a :class:`FieldCopies`: it cleans each field as
    Django's ``BaseForm._clean_fields`` does, but reads a field that cleans its value as
    ``Field`` does from :meth:`FieldCopies.current`, without a copy or a bound field."""

    def _clean_fields(self) -> None:
        fields = self.fields
        current = fields.current if isinstance(fields, FieldCopies) else fields.__getitem__
        for name in fields:
            field = current(name)
            try:
                if (
                    type(field)._clean_bound_field is _PLAIN_BOUND_CLEAN  # type: ignore[attr-defined]
                    and not field.disabled
                ):
                    data = field.widget.value_from_datadict(
                        self.data, self.files, self.add_prefix(name)
                    )
                    self.cleaned_data[name] = field.clean(data)
                else:
                    bound = self[name]
                    self.cleaned_data[name] = bound.field._clean_bound_field(bound)  # type: ignore[attr-defined]
                if hasattr(self, f"clean_{name}"):
                    self.cleaned_data[name] = getattr(self, f"clean_{name}")()
            except forms.ValidationError as exc:
                self.add_error(name, exc)
