"""The inquiry's inputs beyond model, context, users and GPU, as presales read them.

The customer may cap the host memory, turn off the shared or the NVMe tier and describe the
traffic and its targets (``Inquiry``'s fields of the same names); the quote and the
recommendations are sized on them, so the inquiry page lists each one that bears on
the sizing, labelled with the model field's own (translated) name.
"""

from __future__ import annotations

from django.db.models import Field
from django.utils.translation import gettext as _

from configurator.inquiries.models import Inquiry
from configurator.inquiries.traffic_fields import GAP_PROFILE_CHOICES
from configurator.numbers import num

GAP_PROFILES = dict(GAP_PROFILE_CHOICES)
"""The time-between-turns profiles' labels, by stored value (the configurator's)."""


def _text(inquiry: Inquiry, name: str) -> str:
    value = getattr(inquiry, name)
    if name in ("without_shared_tier", "without_nvme_tier", "without_cpu_tier"):
        return _("yes") if value else ""
    if name == "gap_profile":
        return str(GAP_PROFILES.get(value, value))
    if name == "busy_hour_active_share":
        return f"{num(value * 100)} %"
    if value is None:
        return ""
    decimals = 1 if isinstance(value, float) and not value.is_integer() else 0
    return num(value, decimals)


FACT_FIELDS = (
    "max_host_memory_gb",
    "without_shared_tier",
    "without_nvme_tier",
    "without_cpu_tier",
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
"""The inquiry fields :func:`inquiry_facts` lists, in the configurator's order."""


def inquiry_facts(inquiry: Inquiry) -> list[tuple[str, str]]:
    """``(label, value)`` for each field of :data:`FACT_FIELDS` the inquiry gives.

    Labels are the model fields' verbose names in the active language; numbers are
    grouped for that language; a field left empty (``None``, or a tier left
    on) is left out.
    """
    rows = []
    for name in FACT_FIELDS:
        text = _text(inquiry, name)
        if text:
            field = Inquiry._meta.get_field(name)
            assert isinstance(field, Field)
            label = str(field.verbose_name)
            rows.append((label[:1].upper() + label[1:], text))
    return rows
