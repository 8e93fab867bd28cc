"""Date formats by language (``FORMAT_MODULE_PATH``).

English pages, e-mails and PDFs are read by European customers: dates are written day
first with the month's name (``1 Dec 2026``), never the US ``12/01/2026``. German keeps
Django's own formats (``01.12.2026``), written out here so both languages are listed
in one place.
"""
