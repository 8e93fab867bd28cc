"""Where a quote document gets its verification from.

The verification app sits above the quotes (its reports belong to a quote), so the
quotes never import it: it registers its reader when Django starts
(:meth:`configurator.verification.apps.VerificationConfig.ready`), and a document asks
:func:`latest_verification`. Without a reader a document has no verification.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from django.utils import translation

from configurator.quotes.models import Quote


class VerificationSummary(TypedDict):
    """A quote's latest verification as the document shows it, in one language.

    Attributes:
        status: the report's status, worded.
        summary: the presales summary.
        customer_summary: what the customer reads in the PDF.
    """

    status: str
    summary: str
    customer_summary: str


VerificationReader = Callable[[Quote, str], "VerificationSummary | None"]
"""Reads a quote's latest verification in a language; ``None`` when it has none."""

_verification_readers: list[VerificationReader] = []


def read_verifications_with(reader: VerificationReader) -> None:
    """Let ``reader`` supply the verification of every document built from now on;
    registering the same reader again changes nothing."""
    if reader not in _verification_readers:
        _verification_readers.append(reader)


def latest_verification(quote: Quote, language: str | None = None) -> VerificationSummary | None:
    """The latest verification of ``quote`` in ``language`` (else the active one), as the
    registered reader (:func:`read_verifications_with`) words it; ``None`` without one."""
    language = language or translation.get_language() or "en"
    for reader in _verification_readers:
        found = reader(quote, language)
        if found is not None:
            return found
    return None
