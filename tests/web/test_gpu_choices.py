"""The GPU field offers every GPU a chassis the builder sells takes, and takes nothing else
(:func:`configurator.inquiries.workload_inputs.gpu_choices`)."""

from __future__ import annotations

from configurator.inquiries.forms import WorkloadForm
from configurator.inquiries.workload_inputs import gpu_choices


def test_the_gpu_field_takes_every_listed_gpu_and_nothing_else() -> None:
    field = WorkloadForm().fields["gpu"]
    slugs = [slug for slug, _name in gpu_choices()]
    assert all(field.valid_value(slug) for slug in slugs)
    assert not field.valid_value("no-such-gpu")
