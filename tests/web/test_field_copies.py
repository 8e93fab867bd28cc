"""Each form's fields are its own copies (configurator.inquiries.field_copies): changing
one form's field changes neither the class's nor another form's, and a help text is in
the language of the request the form was made in."""

from __future__ import annotations

from django import forms
from django.forms.utils import ErrorDict
from django.http import QueryDict
from django.utils.functional import Promise
from django.utils.translation import gettext, override

from configurator.inquiries.forms import ContactForm, WorkloadForm

USERS_HELP = "Users whose conversation should stay warm"
"""The help text of the users field (configurator.inquiries.forms.WorkloadForm)."""


def test_a_forms_fields_and_widgets_are_its_own() -> None:
    first, second = WorkloadForm(), WorkloadForm()
    field = first.fields["users"]
    field.widget.attrs["data-x"] = "1"
    field.error_messages["required"] = "changed"
    field.validators.append(lambda value: None)
    field.required = False
    for other in (second.fields["users"], WorkloadForm.base_fields["users"]):
        assert "data-x" not in other.widget.attrs
        assert other.error_messages["required"] != "changed"
        assert len(other.validators) == len(field.validators) - 1
        assert other.required
    assert list(first.fields) == list(WorkloadForm.base_fields)
    assert ContactForm().fields["email"] is not ContactForm.base_fields["email"]


def test_the_help_text_is_in_the_language_the_form_was_made_in() -> None:
    for language in ("de", "en", "de"):
        with override(language):
            expected = gettext(USERS_HELP)  # the catalog's text in that language
            form = WorkloadForm()
        assert form.fields["users"].help_text == expected
    with override("de"):
        assert gettext(USERS_HELP) != USERS_HELP  # the German catalog translates it
    assert isinstance(WorkloadForm.base_fields["users"].help_text, Promise)


def _cleaned(form: WorkloadForm, clean_fields: object) -> tuple[dict[str, object], object]:
    form.cleaned_data = {}
    form._errors = ErrorDict()
    clean_fields(form)  # type: ignore[operator]
    return form.cleaned_data, {
        name: [e.messages for e in errors.as_data()] for name, errors in form._errors.items()
    }


def test_cleaning_without_bound_fields_and_remembered_inputs_is_djangos() -> None:
    inputs = [
        {"model": " Qwen/Qwen3-8B ", "users": "100", "context_tokens": "8192", "gpu": "h100-sxm"},
        {"users": "abc", "context_tokens": "-5", "gpu": "nope", "active_share": "30"},
        {"users": "9" * 80, "expert_parallel": "on", "kv_dtype": "auto", "turns": "2.5"},
    ]
    for _round in range(2):  # the second round reads remembered inputs
        for given in inputs:
            data = QueryDict(mutable=True)
            data.update(given)
            ours = _cleaned(WorkloadForm(data), WorkloadForm._clean_fields)
            django = _cleaned(WorkloadForm(data), forms.BaseForm._clean_fields)  # type: ignore[attr-defined]
            assert ours == django
