"""The capacity search: the highest load at which the SLA still holds, bracketed to a precision.

A fixed list of levels may never reach the knee (the demo's fast candidate met the SLA at every
level tried, so its "headroom 4.0" was only a lower bound). The search finds it instead, on the
replay mode's own knob (pipeline/replay/conditions/sweep.py turns a load level into a time scale, a rate or
a concurrency), in the way vLLM's `bench sweep serve_sla` and AIPerf's search do, with
GuideLLM's rule of stopping once the endpoint is over-saturated:

1. the production level (the spec's own load, already replayed) is judged first: if it meets
   the SLA the search grows above it (2.), else it shrinks below it (2b.);
2. growth: from `start` (default production × growth), each level is the previous × `growth`,
   until a level *clearly* misses the SLA (its attainment interval wholly below
   sla.min_attainment, or its error-rate interval wholly above sla.max_error_rate). A level that
   is only inconclusive (its point estimate misses, its interval does not) does not stop the
   growth: one noisy level must not pass for the knee;
2b. shrinking (the candidate cannot carry the production load): each level is the previous /
   `growth` (½×, ¼×, … of the production load), until a level meets the SLA; the smallest level
   is reached where a level ran one request at a time (`ran_alone`: in flight, 1; open loop, the
   caller says whether at most one request was in flight) and still missed: a single request
   breaks the SLA, no fraction of the load meets it, and the bracket stays open saying so;
3. bisection: the bracket is (last met, first missed) where *first missed* is the lowest level
   that did not meet the SLA (clearly missed or inconclusive: capacity is claimed only where the
   SLA was met, and only where every lighter level met it too, as sql/sweep_summary.sql does)
   and *last met* the highest level met below it. Each step replays the bracket's geometric mean
   until first missed / last met <= 1 + 2 × precision (±precision about the bracket's middle);
   in flight (concurrency) levels are integers, so two adjacent integers close it too.

Every loop is bounded: `max_levels` levels replayed (production excluded) and `max_search_s` of
wall clock (no further level starts after it). When a bound stops the search first, the result
says so: `bracket_closed` false and the `reason`. The judging is the caller's (`measure`), so the
same rule runs on the live replay (pipeline/replay/conditions/sweep.py), on the virtual-clock simulator
(tests) and on a fake (unit tests).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

MET, CLEARLY_MISSED, INCONCLUSIVE = "met", "clearly_missed", "inconclusive"
OUTCOMES = (MET, CLEARLY_MISSED, INCONCLUSIVE)
PRODUCTION, GROWTH, SHRINK, BISECT = "production", "growth", "shrink", "bisect"
SINGLE_REQUEST_MISSES = "even one request at a time misses the SLA"


@dataclass(frozen=True)
class SearchBounds:
    """pipeline/spec/sweep.py `Search`, plain (no pydantic here: the unit tests build it by hand)."""

    growth: float = 2.0
    precision: float = 0.10
    max_levels: int = 8
    start: float | None = None
    max_search_s: float | None = None


@dataclass(frozen=True)
class Probe:
    """One level the search judged: its load level, the judgement, and the phase that chose it."""

    level: float
    outcome: str  # MET, CLEARLY_MISSED or INCONCLUSIVE
    phase: str  # PRODUCTION, GROWTH, SHRINK or BISECT


@dataclass(frozen=True)
class SearchResult:
    probes: list[Probe]
    bracket_closed: bool
    reason: str

    @property
    def levels_run(self) -> int:
        """Levels replayed by the search (the production level is the production replay's)."""
        return sum(probe.phase != PRODUCTION for probe in self.probes)


def bracket(levels: list[tuple[float, bool]]) -> tuple[float | None, float | None]:
    """(last met, first missed) of (level, met) pairs: first missed is the lowest level not met,
    last met the highest level met below it (None: no such level)."""
    missed = [level for level, met in levels if not met]
    first_missed = min(missed) if missed else None
    below = [level for level, met in levels if met and (first_missed is None or level < first_missed)]
    return (max(below) if below else None), first_missed


def is_closed(last_met: float | None, first_missed: float | None, precision: float, integer: bool) -> bool:
    """The bracket is within the precision: first missed / last met <= 1 + 2 × precision, or (in
    flight) no integer level lies between the two."""
    if last_met is None or first_missed is None:
        return False
    if integer and first_missed - last_met <= 1:
        return True
    return first_missed / last_met <= 1 + 2 * precision + 1e-12


def _tidy(level: float, low: float, high: float, integer: bool) -> float | None:
    """A level strictly between `low` and `high`: rounded to an integer (in flight) or to three
    significant figures (so a level's label names it exactly), unrounded where rounding would
    reach an end; None when no integer lies strictly between."""
    if integer:
        rounded = float(round(level))
        rounded = min(max(rounded, math.floor(low) + 1.0), math.ceil(high) - 1.0)
        return rounded if low < rounded < high else None
    rounded = float(f"{level:.3g}")
    return rounded if low < rounded < high else level


def _grown(level: float, growth: float, integer: bool) -> float:
    nxt = level * growth
    if integer:
        return float(max(math.ceil(level) + 1, round(nxt)))
    return float(f"{nxt:.3g}") if float(f"{nxt:.3g}") > level else nxt


def _shrunk(level: float, growth: float, integer: bool) -> float | None:
    """The next level below `level` (None: in flight, none below 1)."""
    if integer:
        nxt = float(min(math.floor(level) - 1, round(level / growth)))
        return nxt if nxt >= 1 else None
    nxt = level / growth
    return float(f"{nxt:.3g}") if float(f"{nxt:.3g}") < level else nxt


def _label(level: float) -> str:
    return f"{level:.3g}"


def search(
    production: float,
    bounds: SearchBounds,
    measure: Callable[[float, str], str],
    *,
    integer: bool = False,
    clock: Callable[[], float] = time.monotonic,
    ran_alone: Callable[[float], bool] = lambda level: False,
) -> SearchResult:
    """Search above `production` (a load level: larger is more load) for the highest level meeting
    the SLA, or below it when production misses. `measure(level, phase)` judges one level (for
    PRODUCTION: the replay already done) and returns MET, CLEARLY_MISSED or INCONCLUSIVE;
    `ran_alone(level)`, asked of a level just judged, whether it ran with at most one request in
    flight (the smallest level worth shrinking to)."""
    started = clock()
    probes = [Probe(production, _checked(measure(production, PRODUCTION)), PRODUCTION)]

    def stopped() -> str | None:
        """The bound that stops the search before its next level, if any."""
        run = sum(probe.phase != PRODUCTION for probe in probes)
        if run >= bounds.max_levels:
            return f"level bound: max_levels {bounds.max_levels} replayed"
        if bounds.max_search_s is not None and clock() - started >= bounds.max_search_s:
            return f"time bound: max_search_s {bounds.max_search_s:g} s spent after {run} level(s)"
        return None

    if probes[0].outcome != MET:
        shrunk = _shrink(probes, bounds, measure, integer, ran_alone, stopped)
        if shrunk is not None:
            return shrunk
        return _bisect(probes, bounds, measure, integer, stopped)
    start = bounds.start if bounds.start is not None else _grown(production, bounds.growth, integer)
    if integer:
        start = float(math.ceil(start))
    if start <= production:
        raise ValueError(f"sweep.search.start {start:g} is not above the production load level {production:g}")

    level = start
    while True:  # growth, until a level clearly misses (bounded by max_levels)
        bound = stopped()
        if bound is not None:
            return _unclosed(probes, bound, "before any level clearly missed the SLA")
        probes.append(Probe(level, _checked(measure(level, GROWTH)), GROWTH))
        if probes[-1].outcome == CLEARLY_MISSED:
            break
        level = _grown(level, bounds.growth, integer)
    return _bisect(probes, bounds, measure, integer, stopped)


def _shrink(
    probes: list[Probe],
    bounds: SearchBounds,
    measure: Callable[[float, str], str],
    integer: bool,
    ran_alone: Callable[[float], bool],
    stopped: Callable[[], str | None],
) -> SearchResult | None:
    """Below a production level that missed: ÷ growth until a level meets the SLA (None: go on
    to bisect), or the result where the smallest level missed or a bound stopped the shrinking."""
    level: float | None = probes[0].level
    while True:
        assert level is not None
        if (integer and level <= 1) or ran_alone(level):
            where = f"at {_label(level)}" + (" in flight" if integer else " (at most one request in flight)")
            return SearchResult(
                probes,
                False,
                f"{SINGLE_REQUEST_MISSES} ({where}, {probes[-1].outcome.replace('_', ' ')}): no fraction of the "
                "production load meets it",
            )
        level = _shrunk(level, bounds.growth, integer)
        bound = stopped()
        if bound is not None or level is None:
            return _unclosed(probes, bound or "no smaller level", "before any level met the SLA")
        probes.append(Probe(level, _checked(measure(level, SHRINK)), SHRINK))
        if probes[-1].outcome == MET:
            return None


def _bisect(
    probes: list[Probe],
    bounds: SearchBounds,
    measure: Callable[[float, str], str],
    integer: bool,
    stopped: Callable[[], str | None],
) -> SearchResult:
    """Bisect (last met, first missed) until it is within the precision or a bound stops it."""
    while True:  # bisection of (last met, first missed), bounded by max_levels
        last_met, first_missed = bracket([(probe.level, probe.outcome == MET) for probe in probes])
        assert last_met is not None and first_missed is not None  # a level met, a level above it missed
        if is_closed(last_met, first_missed, bounds.precision, integer):
            ratio, limit = first_missed / last_met, 1 + 2 * bounds.precision
            why = f"ratio {ratio:.3g} ≤ {limit:.3g}" if ratio <= limit else "adjacent whole numbers in flight"
            return SearchResult(
                probes, True, f"bracketed: met at {_label(last_met)}, first missed at {_label(first_missed)} ({why})"
            )
        bound = stopped()
        if bound is not None:
            return _unclosed(probes, bound, "before the bracket was within the precision")
        middle = _tidy(math.sqrt(last_met * first_missed), last_met, first_missed, integer)
        assert middle is not None  # is_closed: an integer lies strictly between
        probes.append(Probe(middle, _checked(measure(middle, BISECT)), BISECT))


def _unclosed(probes: list[Probe], bound: str, when: str) -> SearchResult:
    last_met, first_missed = bracket([(probe.level, probe.outcome == MET) for probe in probes])
    where = f"met at {_label(last_met)}" if last_met is not None else "nothing met"
    where += f", first missed at {_label(first_missed)}" if first_missed is not None else ", nothing missed"
    suffix = " (the capacity is a lower bound)" if first_missed is None else ""
    return SearchResult(probes, False, f"{bound} {when}: {where}{suffix}")


def _checked(outcome: str) -> str:
    if outcome not in OUTCOMES:
        raise ValueError(f"a level's judgement must be one of {OUTCOMES}, got {outcome!r}")
    return outcome
