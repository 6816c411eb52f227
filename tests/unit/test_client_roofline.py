"""The client roofline's search (pipeline/replay/client_validity/roofline.py) with a scripted step runner: which
steps it tries, where it stops, which rate it reports and the plan's share of it. No timing."""

from __future__ import annotations

from pipeline.replay.client_validity.roofline import (
    RooflineSearch,
    events_per_request,
    peak_demand,
    ramp_from,
    search,
    with_demand_share,
)
from pipeline.replay.recording.records import PlannedRequest

BOUNDS = RooflineSearch(rates_per_s=(10.0, 20.0, 40.0, 80.0), step_s=0.1, budget_s=60.0)


def scripted(lags: dict[float, float], errors: dict[float, int] | None = None):
    """A step runner whose step at rate r achieves r sends/s and 10 r events/s with the given lag."""
    tried: list[tuple[float, int]] = []

    def run_step(rate: float, events: int) -> dict:
        tried.append((rate, events))
        return {
            "requests": int(rate),
            "errors": (errors or {}).get(rate, 0),
            "schedule_lag_ms_p99": lags[rate],
            "sends_per_s": rate * 0.99,
            "events_per_s": rate * 10,
        }

    return run_step, tried


def test_the_ramp_stops_at_the_first_step_not_kept_and_reports_the_last_kept():
    run_step, tried = scripted({10.0: 1.0, 20.0: 4.9, 40.0: 7.0, 80.0: 1.0})
    roofline = search(run_step, 16, BOUNDS)
    assert tried == [(10.0, 16), (20.0, 16), (40.0, 16)]  # 80/s never tried
    assert [step["sustained"] for step in roofline["steps"]] == [True, True, False]
    assert roofline["sends_per_s"] == 20.0 * 0.99 and roofline["events_per_s"] == 200.0
    assert roofline["stopped_by"] == "step not sustained" and roofline["lower_bound"] is False


def test_an_error_fails_a_step_whatever_its_lag():
    run_step, _ = scripted({10.0: 1.0, 20.0: 1.0}, errors={20.0: 1})
    roofline = search(run_step, 16, BOUNDS)
    assert [step["rate_per_s"] for step in roofline["steps"]] == [10.0, 20.0]
    assert roofline["sends_per_s"] == 10.0 * 0.99


def test_a_ramp_that_never_fails_is_a_lower_bound_and_a_first_failure_gives_no_rate():
    run_step, _ = scripted(dict.fromkeys(BOUNDS.rates_per_s, 0.5))
    roofline = search(run_step, 16, BOUNDS)
    assert roofline["stopped_by"] == "rates exhausted" and roofline["lower_bound"] is True
    assert roofline["sends_per_s"] == 80.0 * 0.99
    run_step, _ = scripted({10.0: 50.0})
    assert search(run_step, 16, BOUNDS)["sends_per_s"] is None


def test_a_spent_budget_stops_the_ramp_before_its_next_step():
    run_step, tried = scripted(dict.fromkeys(BOUNDS.rates_per_s, 0.5))
    roofline = search(run_step, 16, RooflineSearch(rates_per_s=BOUNDS.rates_per_s, budget_s=0.0))
    assert tried == [] and roofline["steps"] == [] and roofline["stopped_by"] == "time budget"


def test_peak_demand_and_its_share_of_the_roofline():
    stretch = [PlannedRequest(f"r{i}", i * 0.5, [], 40, 2) for i in range(5)]  # 2 sends/s, 40 events each
    demand = peak_demand(stretch)
    assert demand == {"sends_per_s": 2.0, "events_per_s": 80.0}
    assert events_per_request(stretch) == 40
    shared = with_demand_share({"sends_per_s": 20.0, "events_per_s": 800.0}, demand)
    assert shared["peak_sends_share"] == 0.1 and shared["peak_events_share"] == 0.1
    closed_loop = [PlannedRequest(f"r{i}", None, [], 40, 2) for i in range(5)]
    assert (
        with_demand_share({"sends_per_s": 20.0, "events_per_s": None}, peak_demand(closed_loop))["peak_sends_share"]
        is None
    )


def test_the_default_ramp_doubles_from_the_plans_peak():
    assert ramp_from(None)[:3] == (10.0, 20.0, 40.0) and ramp_from(5.0)[0] == 10.0
    assert ramp_from(30.2)[:2] == (31.0, 62.0) and ramp_from(30.2)[-1] <= 6400.0
    run_step, tried = scripted({31.0: 1.0, 62.0: 9.0})
    search(run_step, 8, RooflineSearch(budget_s=60.0), peak_per_s=30.2)
    assert [rate for rate, _ in tried] == [31.0, 62.0]
