"""The configurator's advanced traffic fields: one per traffic input of
:class:`sizing.traffic.profile.Traffic` (a :class:`sizing.workload.Workload` field of the same
name), derived from its type and limits (:mod:`configurator.inquiries.workload_fields`);
empty means the field's default, which the estimate states as an assumption
(:mod:`sizing.traffic.profile`)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from configurator.inquiries.workload_fields import optional_field
from sizing.traffic.profile import FIELDS as TRAFFIC_FIELDS

__all__ = ["TRAFFIC_FIELDS", "TrafficFields"]

GAP_PROFILE_CHOICES = [
    ("", _("Chat (default)")),
    ("chat", _("Chat")),
    ("agent", _("Agent")),
    ("document_qa", _("Document Q&A")),
]


class TrafficFields(forms.Form):
    """How the users use the model; every field may stay empty (its default)."""

    turns = optional_field("turns", label=_("Turns per conversation"))
    gap_profile = optional_field(
        "gap_profile", label=_("Time between turns"), choices=GAP_PROFILE_CHOICES
    )
    gap_median_s = optional_field(
        "gap_median_s",
        label=_("Median time between turns in seconds"),
        help_text=_("With the p90, overrides the profile"),
    )
    gap_p90_s = optional_field("gap_p90_s", label=_("p90 time between turns in seconds"))
    new_prompt_tokens = optional_field(
        "new_prompt_tokens",
        label=_("New prompt tokens per turn"),
        help_text=_("Empty: the context spread over the turns"),
    )
    output_tokens = optional_field(
        "output_tokens",
        label=_("Output tokens per turn"),
        help_text=_("Empty: 343, at most half a turn"),
    )
    busy_hour_active_share = optional_field(
        "busy_hour_active_share",
        label=_("Share of users active in the busiest hour"),
        help_text=_("Above 0 and at most 1"),
    )
    ttft_p95_ms = optional_field("ttft_p95_ms", label=_("TTFT p95 target (ms)"))
    tpot_ms = optional_field("tpot_ms", label=_("TPOT target (ms)"))


if set(TrafficFields.base_fields) != set(TRAFFIC_FIELDS):
    raise ImportError(
        "TrafficFields must have one field per traffic input of sizing.traffic.profile"
    )
