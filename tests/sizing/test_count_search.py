"""The search for the first passing count (sizing.serving.count_search) against a scan of every
count, for checks that fail below a threshold and pass from it on."""

from __future__ import annotations

import random

from sizing.serving.count_search import first_passing


def test_the_search_finds_the_threshold_from_any_start() -> None:
    rng = random.Random(2)
    for _ in range(300):
        top = rng.randint(0, 60)
        threshold = rng.randint(0, top + 3)  # beyond top: nothing passes
        start = rng.randint(0, top)
        tried: list[int] = []

        def check(i: int, threshold: int = threshold, tried: list[int] = tried) -> bool:
            tried.append(i)
            return i >= threshold

        expected = next((i for i in range(top + 1) if i >= threshold), None)  # the scan
        assert first_passing(check, top=top, start=start) == expected
        assert all(0 <= i <= top for i in tried)
