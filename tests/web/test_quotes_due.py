"""Due time of an inquiry: one working day of business hours after receipt.

Holidays are Bavaria's (settings HOLIDAY_COUNTRY=DE, HOLIDAY_SUBDIVISION=BY), business
hours 8 to 17 (settings BUSINESS_HOURS); dates checked against the public calendar.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from configurator.quotes.due import due_at

BERLIN = ZoneInfo("Europe/Berlin")


def t(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=BERLIN)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("received", "due"),
    [
        # Monday 10:00 → Tuesday 10:00 (9 business hours later).
        (t(2026, 3, 2, 10), t(2026, 3, 3, 10)),
        # Before opening: the clock starts at 8:00 and runs the whole day.
        (t(2026, 3, 2, 6, 30), t(2026, 3, 2, 17)),
        # Friday evening → Monday 17:00 (weekend skipped).
        (t(2026, 3, 6, 18), t(2026, 3, 9, 17)),
        # Friday 15:00 → Monday 15:00.
        (t(2026, 3, 6, 15), t(2026, 3, 9, 15)),
        # Monday 5 Jan 2026 12:00: 6 Jan is Epiphany (a holiday in Bavaria) → 7 Jan 12:00.
        (t(2026, 1, 5, 12), t(2026, 1, 7, 12)),
        # Maundy Thursday 2 Apr 2026 → Good Friday and Easter Monday are holidays → 7 Apr.
        (t(2026, 4, 2, 11), t(2026, 4, 7, 11)),
    ],
)
def test_due_one_working_day_after_receipt(received: dt.datetime, due: dt.datetime) -> None:
    assert due_at(received, country="DE", subdivision="BY", business_hours=(8, 17)) == due


def test_region_matters_epiphany_is_no_holiday_in_berlin() -> None:
    # 6 Jan is a public holiday in Bavaria (BY) but not in Berlin (BE).
    received = t(2026, 1, 5, 12)
    assert due_at(received, country="DE", subdivision="BE", business_hours=(8, 17)) == t(
        2026, 1, 6, 12
    )


def test_settings_are_the_defaults(settings) -> None:  # type: ignore[no-untyped-def]
    settings.HOLIDAY_SUBDIVISION = "BE"
    assert due_at(t(2026, 1, 5, 12)) == t(2026, 1, 6, 12)


def test_naive_time_is_rejected() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        due_at(dt.datetime(2026, 3, 2, 10))
