"""The capacity search on the reference endpoint's virtual-clock simulator finds the knee that the
simulator's own fine sweep shows, within the search's precision.

Each level is the demo's serving model (`bench/coverage_sim.py`) offered seeded Poisson arrivals
at the level's rate for 30 s, turned into real raw timings and judged by the project's own
analysis (`pipeline.analysis.sizing.sweep.judge_level`: the queries of sweep_levels), so the search here
runs on exactly the judgements the live sweep uses, without HTTP or wall clock: deterministic.
The fine sweep replays every level 5 % apart from production up to the first level that does not
meet the SLA; its knee is the highest level met with every lighter one met too
(sql/sweep_summary.sql's rule).
"""

import functools

import pytest
import yaml

from bench import coverage_sim as sim
from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.sizing.capacity import capacity_rows
from pipeline.replay.conditions import capacity_search
from pipeline.replay.conditions.sweep import level_at, production_level, with_load_level
from pipeline.spec import Spec

pytestmark = pytest.mark.slow  # about 60 judged levels of 30 simulated seconds (~40 s on 2 cores)

PRODUCTION_RATE, SECONDS, SEED = 2.0, 30.0, 3
FINE_STEP = 1.05


def search_spec(precision: float = 0.10) -> Spec:
    data = yaml.safe_load(sim.DEMO_SPEC.read_text())
    data["workload"]["log"]["path"] = str(sim.ROOT / "examples" / "data" / "production_requests.jsonl")
    data["accuracy"]["path"] = str(sim.ANSWER_KEY)
    data["candidates"] = [dict(data["candidates"][0], name="sim")]
    data["workload"]["replay"] = {
        "mode": "rate",
        "rate_per_s": PRODUCTION_RATE,
        "warmup_s": 5,
        "cooldown_s": 5,
        "sweep": {"search": {"growth": 2.0, "precision": precision, "max_levels": 10}},
    }
    data["sla"] = {"ttft_ms": 500}
    return Spec.model_validate(data)


SPEC = search_spec()
PROFILE = sim.demo_profile()


def level_timings(rate: float):
    level = level_at("rate", rate)
    return level, with_load_level(sim.raw_timings(PROFILE, sim.arrivals(rate, SECONDS, SEED)), level)


@functools.cache
def judged(rate: float) -> str:
    level, timings = level_timings(rate)
    return sweep_analysis.judge_level("sim", level, timings, SPEC)


def fine_sweep() -> tuple[float, float]:
    """(knee, first level not met) of levels FINE_STEP apart from production."""
    level, last_met = PRODUCTION_RATE, None
    while judged(level) == capacity_search.MET:
        last_met, level = level, round(level * FINE_STEP, 6)
        assert level < 200, "the simulator never saturated"
    assert last_met is not None
    return last_met, level


def test_the_search_brackets_the_knee_of_the_simulators_fine_sweep():
    knee, fine_missed = fine_sweep()
    bounds = sweep_spec_bounds()
    result = capacity_search.search(PRODUCTION_RATE, bounds, lambda rate, phase: judged(rate))
    assert result.bracket_closed, result.reason
    last_met, first_missed = capacity_search.bracket(
        [(p.level, p.outcome == capacity_search.MET) for p in result.probes]
    )
    assert first_missed / last_met <= 1 + 2 * bounds.precision
    # the same knee, within the precision: the search's bracket and the fine sweep's step overlap
    assert last_met < fine_missed and knee < first_missed
    assert knee / (1 + 2 * bounds.precision) <= last_met <= knee * (1 + 2 * bounds.precision)
    assert result.levels_run <= bounds.max_levels
    assert result.levels_run < (knee / PRODUCTION_RATE) ** 0.5 * 4  # far fewer levels than the fine sweep ran

    # the levels it ran, through the sweep's tables, give the capacity row at that bracket
    production = production_level(SPEC.workload.replay)
    sources = [(production, level_timings(PRODUCTION_RATE)[1])]
    sources += [level_timings(p.level) for p in result.probes if p.phase != capacity_search.PRODUCTION]
    levels = sweep_analysis.sweep_levels_from(sources, SPEC)
    summary = sweep_analysis.sweep_summary(levels, SPEC).to_pylist()
    (row,) = capacity_rows(SPEC, summary, {"sim": {"bracket_closed": True, "reason": result.reason}})
    assert (row["max_sla_level"], row["first_missed_level"]) == (last_met, first_missed)
    assert row["bracket_closed"] and row["knob"] == "rate_per_s"
    assert row["ci_low"] <= row["output_tokens_per_s"] <= row["ci_high"]
    assert row["requests_per_s_ci_low"] <= row["requests_per_s"] <= row["requests_per_s_ci_high"]
    assert row["n"] > 0 and row["levels_run"] == len(sources)


def sweep_spec_bounds() -> capacity_search.SearchBounds:
    search = SPEC.workload.replay.sweep.search
    return capacity_search.SearchBounds(search.growth, search.precision, search.max_levels)
