"""``form|unbound_cache_seconds``: how long a form's rendered fields may be cached.

An unbound form renders the same fields for everyone in a language (labels, widgets,
initial values, help texts), so the page caches that markup per process and language
(``{% cache form|unbound_cache_seconds … using="fragments" %}``); a bound form shows the
visitor's own values and errors and is never cached (a timeout of 0 stores nothing).
"""

from __future__ import annotations

from django import forms, template

register = template.Library()

UNBOUND_FIELDS_SECONDS = 86400


@register.filter
def unbound_cache_seconds(form: forms.BaseForm) -> int:
    """``UNBOUND_FIELDS_SECONDS`` for an unbound form, 0 (no caching) for a bound one."""
    return 0 if form.is_bound else UNBOUND_FIELDS_SECONDS
