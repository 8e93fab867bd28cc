"""``binding_label``: the name of a constraint or target the engine reports, translated
(:func:`configurator.planning.bindings.binding_label`)."""

from __future__ import annotations

from django import template

from configurator.planning.bindings import binding_label

register = template.Library()
register.filter("binding_label", binding_label)
