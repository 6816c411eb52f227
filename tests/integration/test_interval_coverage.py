"""A coverage floor for the intervals, on a fixed seed (the full measurement is
bench/ci_coverage.py: 200 runs at two loads, figures in bench/CHANGELOG.md).

40 demo-sized replays at 85 % of the simulated endpoint's capacity, analysed by the project's own
code: the share of 95 % intervals that contain the long run's truth, per figure kind. Under this
load the latencies of a run queue together, so intervals that treat them as independent miss
the truth most of the time; the dependence-aware ones must not. Not a timing test: the simulator
runs on a virtual clock, and the seed fixes every number."""

from __future__ import annotations

import pytest

from bench import ci_coverage
from bench import coverage_sim as sim

pytestmark = pytest.mark.slow

RUNS, SEED, LOAD = 40, 3, 0.85
FLOOR = 0.75  # every kind but one, dependence-aware (the full bench at 85 %: 0.785 and up)
# SLA attainment is the known shortfall (full bench 0.73 at 85 %: a calm run's batches all agree,
# bench/CHANGELOG.md says why); its floor only guards against losing what the batches recover
SLA_ATTAINMENT_FLOOR = 0.6
INDEPENDENT_CEILING = 0.5  # what the independent intervals reach for these kinds under this load


@pytest.fixture(scope="module")
def capacity() -> float:
    return sim.capacity_requests_per_s(sim.demo_profile())


def coverage(capacity: float, intervals: str) -> dict[str, float]:
    result = ci_coverage.measure_load(LOAD, capacity, RUNS, SEED, 20, None, intervals, "poisson")
    return {kind: tally.coverage for kind, tally in result.tallies.items()}


def test_dependence_aware_intervals_keep_a_coverage_floor_under_heavy_load(capacity: float):
    aware = coverage(capacity, "dependence_aware")
    floors = {kind: SLA_ATTAINMENT_FLOOR if kind == "sla_attainment" else FLOOR for kind in aware}
    assert {kind: share for kind, share in aware.items() if share < floors[kind]} == {}


def test_the_independent_intervals_fall_below_it(capacity: float):
    """The floor is not trivial: the order-statistic intervals alone, on the same runs, miss it."""
    independent = coverage(capacity, "independent")
    for kind in ("ttft_p50", "ttft_p95", "ttft_p99", "tpot_p50", "itl_p50", "itl_p99", "sla_attainment"):
        assert independent[kind] < INDEPENDENT_CEILING, kind
