"""Fixed choice fields accept exactly the values Django's ``ChoiceField`` accepts for the
same choices, and every form's copy answers from the one set the field made."""

from __future__ import annotations

import copy

import pytest
from django import forms

from configurator.inquiries.choices import FixedChoiceField
from configurator.inquiries.forms import WorkloadForm
from configurator.inquiries.workload_inputs import gpu_choices

GROUPED = [("", "none"), ("a", "A"), ("Group", [("b", "B"), ("c", "C")]), (7, "seven")]
"""Plain choices, an option group and a number (the shapes Django's choices take)."""
VALUES = ["", "a", "b", "c", "Group", "7", 7, "x", "A", " a"]


@pytest.mark.parametrize("value", VALUES)
def test_a_value_is_valid_as_for_djangos_choice_field(value: object) -> None:
    expected = forms.ChoiceField(choices=GROUPED).valid_value(value)  # Django's answer
    assert FixedChoiceField(choices=GROUPED).valid_value(value) is expected


def test_the_gpu_field_takes_every_listed_gpu_and_nothing_else() -> None:
    field = WorkloadForm().fields["gpu"]
    slugs = [slug for slug, _name in gpu_choices()]
    assert all(field.valid_value(slug) for slug in slugs)
    assert not field.valid_value("no-such-gpu")


def test_copies_of_a_field_share_its_set_of_values() -> None:
    field = FixedChoiceField(choices=GROUPED)
    first, second = copy.deepcopy(field), copy.deepcopy(field)
    assert first.valid_value("b") and second.valid_value("c")
    assert first._valid_texts is field._valid_texts is second._valid_texts
