"""German date formats (Django's own, DIN 5008: ``01.12.2026``)."""

DATE_FORMAT = "j. F Y"
SHORT_DATE_FORMAT = "d.m.Y"
DATETIME_FORMAT = "j. F Y, H:i"
SHORT_DATETIME_FORMAT = "d.m.Y, H:i"
TIME_FORMAT = "H:i"
