"""When an inquiry is due: one working day after receipt, in business hours.

Presales promise a quote within one working day (issue 6). A working day is the span
of business hours (``settings.BUSINESS_HOURS``, 8 to 17 o'clock local time) on a weekday
that is not a public holiday of ``settings.HOLIDAY_COUNTRY`` /
``settings.HOLIDAY_SUBDIVISION`` (the ``holidays`` package; Bavaria by default). The
clock runs only inside business hours: an inquiry received on Monday at 10:00 is due on
Tuesday at 10:00; one received on Friday evening is due on Monday at 17:00.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from zoneinfo import ZoneInfo

import holidays
from django.conf import settings


@lru_cache(maxsize=8)
def _calendar(country: str, subdivision: str | None) -> holidays.HolidayBase:
    return holidays.country_holidays(country, subdiv=subdivision or None)


def is_working_day(day: dt.date, *, country: str, subdivision: str | None) -> bool:
    """True for Monday to Friday when ``day`` is no public holiday in the region."""
    return day.weekday() < 5 and day not in _calendar(country, subdivision)


def due_at(
    received_at: dt.datetime,
    *,
    country: str | None = None,
    subdivision: str | None = None,
    business_hours: tuple[int, int] | None = None,
    tz: str | None = None,
) -> dt.datetime:
    """The moment one working day of business hours after ``received_at`` has passed.

    Args:
        received_at: an aware datetime.
        country, subdivision, business_hours, tz: default to the settings
            ``HOLIDAY_COUNTRY``, ``HOLIDAY_SUBDIVISION``, ``BUSINESS_HOURS`` (start, end
            hour) and ``TIME_ZONE``.

    Returns:
        An aware datetime in the local time zone.

    Raises:
        ValueError: a naive ``received_at`` or business hours that are not start < end.
    """
    if received_at.tzinfo is None:
        raise ValueError("received_at must be timezone-aware")
    country = country or str(settings.HOLIDAY_COUNTRY)
    if subdivision is None:
        subdivision = settings.HOLIDAY_SUBDIVISION
    start_h, end_h = business_hours or settings.BUSINESS_HOURS
    if not 0 <= start_h < end_h <= 24:
        raise ValueError(f"business hours must be start < end within 0..24, got {start_h}..{end_h}")
    zone = ZoneInfo(tz or settings.TIME_ZONE)
    local = received_at.astimezone(zone)
    remaining = dt.timedelta(hours=end_h - start_h)
    day = local.date()
    cursor = local
    # Walk forward day by day, spending business hours until one working day is used.
    for _ in range(400):
        if is_working_day(day, country=country, subdivision=subdivision):
            open_at = dt.datetime.combine(day, dt.time(start_h), zone)
            close_at = (
                dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), zone)
                if end_h == 24
                else dt.datetime.combine(day, dt.time(end_h), zone)
            )
            begin = max(cursor, open_at)
            if begin < close_at:
                available = close_at - begin
                if available >= remaining:
                    return begin + remaining
                remaining -= available
        day += dt.timedelta(days=1)
        cursor = dt.datetime.combine(day, dt.time(0), zone)
    raise ValueError(f"no working day within 400 days of {received_at.isoformat()}")
