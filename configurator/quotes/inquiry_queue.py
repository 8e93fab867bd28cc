"""The presales inquiry queue: inquiries with their due time, soonest first."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from configurator.inquiries.models import Inquiry
from configurator.quotes.due import due_at

OPEN_STATUSES = (Inquiry.Status.NEW, Inquiry.Status.IN_PROGRESS)


@dataclass(frozen=True)
class QueueRow:
    """One inquiry in the queue with its due time."""

    inquiry: Inquiry
    due_at: dt.datetime
    overdue: bool


def inquiry_queue(*, now: dt.datetime, status: str | None = None) -> list[QueueRow]:
    """Inquiries sorted by due time (one working day after receipt), soonest first.

    ``status`` ``None`` lists the open ones (new, in progress), ``"all"`` every one, any
    other value only that status. An open inquiry past its due time is overdue.
    """
    qs = Inquiry.objects.all()
    if status is None:
        qs = qs.filter(status__in=OPEN_STATUSES)
    elif status != "all":
        qs = qs.filter(status=status)
    rows = []
    for inquiry in qs:
        due = due_at(inquiry.received_at)
        rows.append(
            QueueRow(
                inquiry=inquiry,
                due_at=due,
                overdue=inquiry.status in OPEN_STATUSES and due < now,
            )
        )
    return sorted(rows, key=lambda r: (r.due_at, r.inquiry.pk))
