"""The capacity search's rule on a fake judge (a known knee): growth until a clear miss, bisection
to the precision, every bound stopping it with its reason, inconclusive levels as not met."""

import itertools

import pytest

from pipeline.replay.conditions.capacity_search import (
    BISECT,
    CLEARLY_MISSED,
    GROWTH,
    INCONCLUSIVE,
    MET,
    PRODUCTION,
    SHRINK,
    SINGLE_REQUEST_MISSES,
    SearchBounds,
    bracket,
    is_closed,
    search,
)


def knee_at(knee: float, inconclusive_up_to: float | None = None):
    """Met up to `knee`, inconclusive up to `inconclusive_up_to`, clearly missed above."""
    asked: list[tuple[float, str]] = []

    def judge(level: float, phase: str) -> str:
        asked.append((level, phase))
        if level <= knee:
            return MET
        if inconclusive_up_to is not None and level <= inconclusive_up_to:
            return INCONCLUSIVE
        return CLEARLY_MISSED

    return judge, asked


def test_growth_then_bisection_brackets_the_knee_within_the_precision():
    judge, asked = knee_at(5.3)
    result = search(1.0, SearchBounds(growth=2.0, precision=0.10), judge)
    assert result.bracket_closed
    assert [phase for _, phase in asked] == [PRODUCTION, GROWTH, GROWTH, GROWTH, BISECT, BISECT]
    assert [level for level, _ in asked[:4]] == [1.0, 2.0, 4.0, 8.0]
    last_met, first_missed = bracket([(p.level, p.outcome == MET) for p in result.probes])
    assert last_met <= 5.3 < first_missed
    assert first_missed / last_met <= 1.2
    assert result.reason.startswith("bracketed: met at 4.76, first missed at 5.66")
    assert result.levels_run == 5


@pytest.mark.parametrize("knee", [1.05, 1.9, 3.3, 7.77, 12.0, 30.0])
@pytest.mark.parametrize("precision", [0.05, 0.10, 0.25])
def test_the_bracket_always_holds_the_knee(knee, precision):
    judge, _ = knee_at(knee)
    result = search(1.0, SearchBounds(growth=2.0, precision=precision, max_levels=12), judge)
    last_met, first_missed = bracket([(p.level, p.outcome == MET) for p in result.probes])
    assert result.bracket_closed, result.reason
    assert last_met <= knee < first_missed
    assert first_missed / last_met <= 1 + 2 * precision


def test_a_production_level_that_misses_shrinks_then_bisects_below_it():
    judge, asked = knee_at(0.31)
    result = search(1.0, SearchBounds(growth=2.0, precision=0.10), judge)
    assert result.bracket_closed, result.reason
    assert [(level, phase) for level, phase in asked[:4]] == [
        (1.0, PRODUCTION),
        (0.5, SHRINK),
        (0.25, SHRINK),
        (0.354, BISECT),
    ]
    assert {phase for _, phase in asked[4:]} == {BISECT}
    last_met, first_missed = bracket([(p.level, p.outcome == MET) for p in result.probes])
    assert last_met <= 0.31 < first_missed and first_missed / last_met <= 1.2


@pytest.mark.parametrize("knee", [0.9, 0.4, 0.26, 0.13, 0.02])
def test_the_bracket_below_production_always_holds_the_knee(knee):
    judge, _ = knee_at(knee)
    result = search(1.0, SearchBounds(growth=2.0, precision=0.10, max_levels=12), judge)
    last_met, first_missed = bracket([(p.level, p.outcome == MET) for p in result.probes])
    assert result.bracket_closed, result.reason
    assert last_met <= knee < first_missed <= 1.0


def test_an_inconclusive_production_level_shrinks_too():
    judge, asked = knee_at(0.5, inconclusive_up_to=1.5)
    result = search(1.0, SearchBounds(), judge)
    assert asked[1] == (0.5, SHRINK)
    assert result.bracket_closed and bracket([(p.level, p.outcome == MET) for p in result.probes])[0] == 0.5


def test_in_flight_the_smallest_level_is_one_request_and_missing_it_leaves_the_bracket_open():
    judge, asked = knee_at(0.5)  # nothing in flight meets it: not even one request at a time
    result = search(8.0, SearchBounds(), judge, integer=True)
    assert [level for level, _ in asked] == [8.0, 4.0, 2.0, 1.0]
    assert not result.bracket_closed
    assert result.reason.startswith(SINGLE_REQUEST_MISSES + " (at 1 in flight, clearly missed)")
    assert result.levels_run == 3


def test_open_loop_shrinking_stops_at_a_level_that_ran_one_request_at_a_time():
    judge, asked = knee_at(0.001)
    result = search(1.0, SearchBounds(max_levels=8), judge, ran_alone=lambda level: level <= 0.125)
    assert [level for level, _ in asked] == [1.0, 0.5, 0.25, 0.125]
    assert result.reason.startswith(SINGLE_REQUEST_MISSES + " (at 0.125 (at most one request in flight)")


def test_max_levels_stops_the_shrinking_with_nothing_met():
    judge, _ = knee_at(0.001)
    result = search(1.0, SearchBounds(max_levels=2), judge)
    assert not result.bracket_closed
    assert (
        result.reason
        == "level bound: max_levels 2 replayed before any level met the SLA: nothing met, first missed at 0.25"
    )


def test_max_levels_stops_the_growth_and_says_the_capacity_is_a_lower_bound():
    judge, asked = knee_at(1000.0)
    result = search(1.0, SearchBounds(max_levels=3), judge)
    assert not result.bracket_closed
    assert [level for level, _ in asked] == [1.0, 2.0, 4.0, 8.0]
    assert result.reason == (
        "level bound: max_levels 3 replayed before any level clearly missed the SLA: met at 8, nothing missed "
        "(the capacity is a lower bound)"
    )


def test_max_levels_stops_the_bisection_with_the_bracket_it_had():
    judge, _ = knee_at(5.3)
    result = search(1.0, SearchBounds(max_levels=4), judge)
    assert not result.bracket_closed
    assert result.reason == (
        "level bound: max_levels 4 replayed before the bracket was within the precision: met at 4, first missed at 5.66"
    )


def test_the_time_bound_stops_before_the_next_level():
    ticks = itertools.count(0.0, 10.0)  # every clock read is 10 s later
    judge, asked = knee_at(1000.0)
    result = search(1.0, SearchBounds(max_search_s=25.0), judge, clock=lambda: next(ticks))
    assert not result.bracket_closed
    assert result.reason.startswith("time bound: max_search_s 25 s spent after 2 level(s)")
    assert len(asked) == 3  # production + 2


def test_an_inconclusive_level_does_not_stop_the_growth_but_caps_the_capacity():
    # met up to 3, inconclusive up to 6, clearly missed above: growth 2, 4 (inconclusive), 8 (missed)
    judge, asked = knee_at(3.0, inconclusive_up_to=6.0)
    result = search(1.0, SearchBounds(), judge)
    assert [level for level, phase in asked if phase == GROWTH] == [2.0, 4.0, 8.0]
    last_met, first_missed = bracket([(p.level, p.outcome == MET) for p in result.probes])
    assert result.bracket_closed
    assert last_met <= 3.0 < first_missed <= 4.0  # bisected below the inconclusive level, never above it


def test_in_flight_levels_are_integers_and_adjacent_integers_close_the_bracket():
    judge, asked = knee_at(5.0)
    result = search(2.0, SearchBounds(precision=0.01), judge, integer=True)
    assert all(level == int(level) for level, _ in asked)
    assert result.bracket_closed
    assert bracket([(p.level, p.outcome == MET) for p in result.probes]) == (5.0, 6.0)
    # closed by adjacency, not by the ratio (6 / 5 = 1.2 > 1.02): the reason says which
    assert result.reason.endswith("(adjacent whole numbers in flight)"), result.reason


def test_a_start_is_the_first_level_beyond_production():
    judge, asked = knee_at(100.0)
    search(1.0, SearchBounds(start=3.0, growth=3.0, max_levels=2), judge)
    assert [level for level, _ in asked] == [1.0, 3.0, 9.0]
    with pytest.raises(ValueError, match="not above the production load level 1"):
        search(1.0, SearchBounds(start=0.5), judge)


def test_a_judge_must_answer_one_of_the_three_outcomes():
    with pytest.raises(ValueError, match="must be one of"):
        search(1.0, SearchBounds(), lambda level, phase: "maybe")


def test_the_precision_rule():
    assert is_closed(10.0, 12.0, 0.10, integer=False)
    assert not is_closed(10.0, 12.1, 0.10, integer=False)
    assert is_closed(10.0, 11.0, 0.01, integer=True)
    assert not is_closed(None, 12.0, 0.10, integer=False)
    assert not is_closed(10.0, None, 0.10, integer=False)
    assert bracket([(1.0, True), (2.0, False), (4.0, True), (8.0, False)]) == (1.0, 2.0)
    assert bracket([(1.0, True), (2.0, True)]) == (2.0, None)
    assert bracket([(1.0, False)]) == (None, 1.0)
