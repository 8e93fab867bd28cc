"""Numbers as the page prints them (:mod:`configurator.numbers`): Python's rounding of
the value's type, grouped by three with the language's separators of Django's locale
formats, however often a value recurs (the texts of recurring values are kept), for each
type of value and for zeros of either sign."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import translation
from django.utils.formats import get_format

from configurator.numbers import grouped, num, separators

VALUES = [0, 7, -7, 1152, 10_100, -1_234_567, 0.0, -0.0, 2.675, -0.004, 1234567.891, 1e-7]
VALUES += [Decimal("0.125"), Decimal("-0"), Decimal("12345.005"), True]


@pytest.mark.parametrize("language", ["de", "en"])
@pytest.mark.parametrize("decimals", [0, 1, 2])
def test_num_groups_every_value_in_the_language_again_and_again(
    language: str, decimals: int
) -> None:
    with translation.override(language):
        point, group = get_format("DECIMAL_SEPARATOR"), get_format("THOUSAND_SEPARATOR")
        for _round in range(3):
            for value in VALUES:
                python = f"{value:,}" if type(value) is int and not decimals else None
                python = python or f"{value:,.{decimals}f}"
                expected = "".join({",": group, ".": point}.get(c, c) for c in python)
                assert num(value, decimals) == expected, (value, decimals)


def test_a_negative_zero_keeps_its_sign_after_a_zero_and_back() -> None:
    de = separators("de")
    assert [grouped(v, 1, *de) for v in (0.0, -0.0, 0.0, -0.0)] == ["0,0", "-0,0", "0,0", "-0,0"]
    assert [grouped(v, 2, *de) for v in (Decimal("0"), Decimal("-0"))] == ["0,00", "-0,00"]


def test_equal_values_of_other_types_keep_their_own_text() -> None:
    en = separators("en")
    assert [grouped(v, 0, *en) for v in (1234, 1234.0, 1234, 1234.0)] == ["1,234"] * 4
    assert grouped(10**20, 0, *en) == "100,000,000,000,000,000,000"
    assert grouped(float(10**20), 0, *en) == "100,000,000,000,000,000,000"
    assert grouped(10**20 + 1, 0, *en) == "100,000,000,000,000,000,001"
    assert grouped(0.1 + 0.2, 17, *en) == "0.30000000000000004"
    assert grouped(0.3, 17, *en) == "0.29999999999999999"
