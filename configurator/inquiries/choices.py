"""Choice fields whose choices are fixed for the life of the process."""

from __future__ import annotations

import copy
from typing import Any

from django import forms


class FixedSelect(forms.Select):
    """A select whose choices are fixed for the process: each form's copy shares them.

    Django copies and re-normalises a select's choices for every form instance; for
    choices that never change per request that is wasted work on every keystroke.
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> FixedSelect:
        obj = copy.copy(self)
        obj.attrs = self.attrs.copy()
        memo[id(self)] = obj
        return obj


class FixedChoiceField(forms.ChoiceField):
    """A choice field whose choices are fixed for the process (see :class:`FixedSelect`);
    nothing may change ``choices`` on a form instance.

    A value is valid when its text is one of the choices' values (those inside option
    groups too), as for ``ChoiceField``; the set of those texts is made once and shared
    by every form's copy of the field.
    """

    widget = FixedSelect

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._valid_texts: list[frozenset[str]] = []  # the same list in every copy

    def valid_value(self, value: Any) -> bool:
        if not self._valid_texts:
            texts: set[str] = set()
            choices: Any = self.choices  # normalised pairs (Django's stubs say less)
            for key, label in choices:
                if isinstance(label, list | tuple):
                    texts.update(str(inner) for inner, _label in label)
                else:
                    texts.add(str(key))
            self._valid_texts.append(frozenset(texts))
        return str(value) in self._valid_texts[0]

    def __deepcopy__(self, memo: dict[int, Any]) -> FixedChoiceField:
        return forms.Field.__deepcopy__(self, memo)
