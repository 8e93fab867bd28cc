"""The configurator's advanced traffic fields: one per traffic field of
:class:`sizing.workload.Workload`, same name; empty means the field's default, which the
estimate states as an assumption (:mod:`sizing.traffic`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from sizing.return_gaps import PROFILES
from sizing.workload import FIELDS

TRAFFIC_FIELDS = (
    "turns",
    "gap_profile",
    "gap_median_s",
    "gap_p90_s",
    "new_prompt_tokens",
    "output_tokens",
    "busy_hour_active_share",
    "ttft_p95_ms",
    "tpot_ms",
)
"""The traffic fields of the form, in page order."""

GAP_PROFILE_CHOICES = [
    ("", _("Chat (default)")),
    ("chat", _("Chat")),
    ("agent", _("Agent")),
    ("document_qa", _("Document Q&A")),
]
assert {c for c, _label in GAP_PROFILE_CHOICES} == {"", *PROFILES}


def _limits(name: str, *, number: bool = False) -> dict[str, Any]:
    meta = FIELDS[name].metadata
    out: dict[str, Any] = {"required": False}
    if "min" in meta:
        out["min_value"] = meta["min"]
    if "max" in meta:
        out["max_value"] = meta["max"]
    attrs = {"inputmode": "decimal", "step": "any"} if number else {"inputmode": "numeric"}
    default = FIELDS[name].default
    if default is not None:
        attrs["placeholder"] = f"{default:g}"
    out["widget"] = forms.NumberInput(attrs=attrs)
    return out


class TrafficFields(forms.Form):
    """How the users use the model; every field may stay empty (its default)."""

    turns = forms.IntegerField(label=_("Turns per conversation"), **_limits("turns"))
    gap_profile = forms.ChoiceField(
        label=_("Time between turns"),
        choices=GAP_PROFILE_CHOICES,
        required=False,
    )
    gap_median_s = forms.FloatField(
        label=_("Median time between turns in seconds"),
        help_text=_("With the p90, overrides the profile"),
        **_limits("gap_median_s", number=True),
    )
    gap_p90_s = forms.FloatField(
        label=_("p90 time between turns in seconds"), **_limits("gap_p90_s", number=True)
    )
    new_prompt_tokens = forms.IntegerField(
        label=_("New prompt tokens per turn"),
        help_text=_("Empty: the context spread over the turns"),
        **_limits("new_prompt_tokens"),
    )
    output_tokens = forms.IntegerField(
        label=_("Output tokens per turn"),
        help_text=_("Empty: 343, at most half a turn"),
        **_limits("output_tokens"),
    )
    busy_hour_active_share = forms.FloatField(
        label=_("Share of users active in the busiest hour"),
        help_text=_("Above 0 and at most 1"),
        **_limits("busy_hour_active_share", number=True),
    )
    ttft_p95_ms = forms.FloatField(
        label=_("TTFT p95 target (ms)"), **_limits("ttft_p95_ms", number=True)
    )
    tpot_ms = forms.FloatField(label=_("TPOT target (ms)"), **_limits("tpot_ms", number=True))
