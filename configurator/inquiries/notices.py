"""The page's sentence when the Hub did not answer and an older copy sized the model.

``configurator.modelhub`` falls back to its cache or the offline catalog when the Hub is
off, unreachable or slow (issue 4 item 4) and says so in English in
``ResolvedModel.notice``; the page says the same in the customer's language.
"""

from __future__ import annotations

from django.conf import settings
from django.utils import formats
from django.utils.translation import gettext as _

from configurator.modelhub.models import HubModel
from configurator.modelhub.services import ResolvedModel

TIMEOUT_PHRASE = "did not answer within"
"""How ``configurator.modelhub.hub`` words a lookup that ran into its deadline."""


def seconds_text(value: float) -> str:
    number = float(value)
    return str(formats.localize(int(number) if number.is_integer() else number))


def fallback_notice(resolved: ResolvedModel) -> str:
    """One sentence for the estimate: why the Hub was not used and which copy was.

    ``""`` when the answer is not a fallback (no ``notice``).
    """
    if not resolved.notice:
        return ""
    if settings.HF_HUB_OFFLINE:
        reason = _("This installation does not contact the Hugging Face Hub")
    elif TIMEOUT_PHRASE in resolved.notice:
        reason = _("The Hugging Face Hub did not answer within %(seconds)s s") % {
            "seconds": seconds_text(settings.HF_TIMEOUT_SECONDS)
        }
    else:
        reason = _("The Hugging Face Hub could not be reached")
    model = resolved.spec.repo_id
    if resolved.origin == "cache":
        row = HubModel.objects.for_repo(model).filter(sha=resolved.sha).first()
        date = formats.date_format(row.fetched_at, "SHORT_DATE_FORMAT") if row else "?"
        source = _(
            "this estimate uses the copy of %(model)s (commit %(sha)s) stored on %(date)s"
        ) % {"model": model, "sha": resolved.sha[:12], "date": date}
    else:
        source = _("this estimate uses the offline catalog's entry for %(model)s") % {
            "model": model
        }
    return f"{reason}; {source}."
