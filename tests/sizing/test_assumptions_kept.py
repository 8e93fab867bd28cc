"""The traffic defaults a plan states, kept per inputs across plans: the same notes and
sentences as made afresh, and none of another input's."""

from __future__ import annotations

from sizing.traffic.assumptions import assumption_notes, stated
from sizing.traffic.profile import Traffic, conversation_shape, gaps
from sizing.traffic.return_gaps import GapDistribution


def _fresh(
    traffic: Traffic, sized_ms: tuple[float, float], gap: GapDistribution | None = None
) -> tuple[object, ...]:
    shape = conversation_shape(traffic, 8192)
    gap = gap or gaps(traffic)
    notes = assumption_notes(traffic, shape, gap, sized_ms=sized_ms)
    return notes, tuple(n.text for n in notes)


def test_kept_notes_are_those_made_afresh() -> None:
    traffic = Traffic()
    shape, gap = conversation_shape(traffic, 8192), gaps(traffic)
    first = stated(traffic, shape, gap, (2000.0, 200.0))
    assert first == _fresh(traffic, (2000.0, 200.0))
    assert (
        stated(Traffic(), conversation_shape(Traffic(), 8192), gaps(traffic), (2000.0, 200.0))
        == first
    )
    relaxed = stated(traffic, shape, gap, (3000.0, 200.0))
    assert relaxed == _fresh(traffic, (3000.0, 200.0)) and relaxed != first
    assert "sized for 3,000 ms" in relaxed[1][-1]


def test_an_equal_figure_of_another_type_is_not_served_from_the_store() -> None:
    # 2000 and 2000.0 are equal keys; the notes quote the figure as given.
    traffic = Traffic()
    shape = conversation_shape(traffic, 8192)
    as_float = stated(traffic, shape, gaps(traffic), (2000.0, 200.0))
    as_int = stated(traffic, shape, gaps(traffic), (2000, 200))
    assert as_int == _fresh(traffic, (2000, 200))
    assert repr(as_int[0]) != repr(as_float[0])
    whole = GapDistribution(123, 483, name="chat", source=gaps(traffic).source)
    assert repr(stated(traffic, shape, whole, (2000.0, 200.0))[0]) == repr(
        _fresh(traffic, (2000.0, 200.0), whole)[0]
    )
