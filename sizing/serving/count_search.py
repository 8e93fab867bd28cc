"""The search for the first count of a range that passes a check, from a first guess.

Rule (the replica searches of :mod:`sizing.serving.replicas`): the check is taken as monotone in
the count (it fails below some count and passes from it on). From the guess, the
search steps 1, 2, 4, … counts up while the check fails and down while it passes,
until the answer lies between two tried counts; then it halves that interval. A guess
changes only how many counts are checked: every answer is a count that passes next to
one that fails (or the end of the range).
"""

from __future__ import annotations

from collections.abc import Callable


def first_passing(check: Callable[[int], bool], *, top: int, start: int) -> int | None:
    """The smallest index in ``[0, top]`` whose ``check`` passes, searched from ``start``
    (within the range), or ``None`` when ``top`` fails too (index −1 counts as failing).

    Source: module docstring.
    """
    probe = start
    bad = -1  # below the range: taken as not passing
    step = 1
    if check(probe):
        good = probe
        while good - bad > 1:
            probe = max(bad + 1, good - step)
            if not check(probe):
                bad = probe
                break
            good, step = probe, step * 2
    else:
        while True:
            if probe == top:
                return None
            bad, probe = probe, min(top, probe + step)
            step *= 2
            if check(probe):
                good = probe
                break
    while good - bad > 1:
        mid = (good + bad) // 2
        if check(mid):
            good = mid
        else:
            bad = mid
    return good
