"""Links to an estimate: the workload form's inputs as a query string, and the form a
shared link's query fills in (:class:`ShareLinks`, a base of
:class:`~configurator.inquiries.forms.WorkloadForm`)."""

from __future__ import annotations

from typing import Any, ClassVar, Self
from urllib.parse import urlencode

from django import forms
from django.http import QueryDict

from sizing.workload import LEGACY_NAMES

LEGACY_QUERY_NAMES = {**LEGACY_NAMES, "active_share_percent": "active_share"}
"""Names earlier share links used for a field (the share is in percent in both)."""

UPLOAD_FIELDS = ("config_file", "config_text", "model_name", "weights_gib")
"""The private-model inputs: never part of a shared link (a link cannot carry a file)."""
_UNSHARED = frozenset(UPLOAD_FIELDS)

MAX_ECHOED_INPUT_CHARS = 100
"""The longest input with an error that a share link still carries (a typo in a model
id or a number fits; a pasted document does not)."""


def _echoable(value: str) -> bool:
    """Whether a share link may carry ``value``, an input with an error: at most
    :data:`MAX_ECHOED_INPUT_CHARS` characters, one line, no control or other
    unprintable characters (``str.isprintable``)."""
    return len(value) <= MAX_ECHOED_INPUT_CHARS and value.isprintable()


_DEFAULTS: dict[type[forms.Form], dict[str, str]] = {}


def _defaults(form_class: type[forms.Form]) -> dict[str, str]:
    """:meth:`ShareLinks.defaults`, made once per class (read only: callers copy it)."""
    defaults = _DEFAULTS.get(form_class)
    if defaults is None:
        defaults = _DEFAULTS[form_class] = {
            name: "" if field.initial is None else str(field.initial)
            for name, field in form_class.base_fields.items()
        }
    return defaults


class ShareLinks(forms.Form):
    """A form whose inputs a link carries: :meth:`share_query` writes them,
    :meth:`from_query` reads them back."""

    SHARE_ALWAYS: ClassVar[tuple[str, ...]] = ("model", "context_tokens", "users")
    """Fields every share link names; the others only where they differ from the default."""

    private_config: dict[str, Any] | None
    """A private model's parsed config.json (``None``: a Hub model), set by the form."""

    @classmethod
    def defaults(cls) -> dict[str, str]:
        """Form data of the default workload: each field's initial value, ``""`` where none."""
        return dict(_defaults(cls))

    @classmethod
    def from_query(cls, query: QueryDict) -> Self:
        """A form bound to a shared link's parameters, the missing ones from :meth:`defaults`.

        Unbound when the query names no workload field (the plain page).
        """
        given = {
            LEGACY_QUERY_NAMES.get(name, name): query[name]
            for name in query
            if LEGACY_QUERY_NAMES.get(name, name) in cls.base_fields and name not in UPLOAD_FIELDS
        }
        if not given:
            return cls()
        return cls({**cls.defaults(), **given})

    def share_query(self) -> str:
        """The current inputs as a query string for a link to this estimate (``""``: none,
        also for a private model, whose file a link cannot carry).

        The link names the model, context and users, and every other field whose value
        differs from :meth:`defaults`; :meth:`from_query` reads it back. A field with an
        error keeps its input only when :func:`_echoable` (the page opened from the link
        shows the same error); a longer or multi-line input is left out.
        """
        if not self.is_bound or self.private_config is not None:
            return ""
        defaults = _defaults(type(self))
        always = self.SHARE_ALWAYS
        errors = self.errors
        data = self.data
        pairs = []
        for name in self.fields:
            if name in _UNSHARED:
                continue
            value = str(data.get(name, "")).strip()
            if name in errors and not _echoable(value):
                continue
            if name in always or value != defaults[name]:
                pairs.append((name, value))
        return urlencode(pairs)
