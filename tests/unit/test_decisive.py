"""What would settle an inconclusive figure (pipeline/analysis/judge/decisive.py): the n-needed rule checked
against intervals that really narrow as 1/√n, the open-side and at-the-bound cases, and the words."""

from __future__ import annotations

import json
import math

import jsonschema
import numpy as np
import pytest
from scipy.stats import binom

from pipeline import REPO_ROOT
from pipeline.analysis.judge.decisive import (
    CANNOT_BY_LENGTH,
    claim_bound,
    growth,
    more_samples,
    samples_to_close,
    to_resolve,
    with_resolution,
    woodruff_samples_to_close,
)
from pipeline.analysis.statistics.dependence import t_quantile, woodruff_ranks
from pipeline.analysis.statistics.stats import INCONCLUSIVE, Z_95, order_statistic_ranks, verdict
from pipeline.pack.render.pages import render_html, render_markdown
from tests.support.pack_documents import document, figure_row


def test_claim_bound_moves_the_claim_by_its_tolerance_towards_the_bad_side():
    assert claim_bound(100.0, larger_is_better=True, tolerance=0.1) == pytest.approx(90.0)
    assert claim_bound(100.0, larger_is_better=False, tolerance=0.1) == pytest.approx(110.0)
    assert claim_bound(100.0, larger_is_better=False) == 100.0


def test_the_factor_is_the_squared_ratio_of_the_facing_half_width_to_the_distance():
    # measured 95 below a bound of 100:
    # the upper side (facing 100) is 10 wide, the distance 5: four times as long
    assert growth(95.0, 80.0, 105.0, 100.0, n=200).factor == pytest.approx(4.0)
    # measured above the bound: the lower side faces it
    assert growth(120.0, 90.0, 200.0, 100.0, n=200).factor == pytest.approx((30 / 20) ** 2)


def test_a_mean_interval_grown_by_the_factor_resolves_the_verdict_and_one_sample_fewer_does_not():
    # a normal-mean interval, half-width z·σ/√n: at the predicted n it clears the bound, just below it does not
    sigma, n, measured, claimed = 20.0, 50, 103.0, 100.0  # larger is better: would hold
    half = Z_95 * sigma / math.sqrt(n)
    assert verdict(claimed, measured - half, measured + half, True) == INCONCLUSIVE
    found = growth(measured, measured - half, measured + half, claimed, n)
    total = n + more_samples(n, found.factor)
    wide = Z_95 * sigma / math.sqrt(total)
    narrower_by_one = Z_95 * sigma / math.sqrt(total - 1)
    assert verdict(claimed, measured - wide, measured + wide, True) == "holds"
    assert measured - narrower_by_one <= claimed + 1e-9  # one fewer would not (rounding up is the least)


def test_the_measured_design_effect_is_in_the_interval_so_the_factor_carries_it():
    # batch means: the same σ with design effect 4 gives a half-width twice as wide, so four times the samples
    independent = growth(103.0, 103.0 - 2.0, 105.0, 100.0, n=100).factor
    dependent = growth(103.0, 103.0 - 4.0, 107.0, 100.0, n=100, design_effect=4.0).factor
    assert dependent == pytest.approx(4 * independent)


def test_no_length_resolves_a_value_at_the_bound():
    found = growth(100.0, 90.0, 110.0, 100.0, n=500)
    assert found.factor is None and "at the claim's bound" in found.why


@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99])
def test_samples_to_close_is_the_first_n_whose_order_statistics_bound_the_side(q):
    for upper in (True, False):
        n = samples_to_close(q, upper, 0.95)
        ranks, before = order_statistic_ranks(n, q), order_statistic_ranks(max(n - 1, 1), q)
        side, side_before = (ranks.high, before.high) if upper else (ranks.low, before.low)
        assert side is not None
        assert n == 1 or side_before is None


def test_an_open_side_is_a_lower_bound_from_the_samples_it_needs_to_close():
    # p99, 183 requests, design effect 1.07, upper end open, measured below a claim of 2,000 ms
    found = growth(1668.0, 1498.0, None, 2000.0, n=183, design_effect=1.07, percentile=0.99)
    closing = samples_to_close(0.99, True, 0.95) * 1.07 / 183
    assert found.at_least and found.factor == pytest.approx(max(closing, (170 / 332) ** 2))
    assert binom.cdf(samples_to_close(0.99, True, 0.95) - 1, samples_to_close(0.99, True, 0.95), 0.99) >= 0.975


@pytest.mark.parametrize("q, upper", [(0.95, True), (0.99, True), (0.5, False), (0.05, False)])
def test_a_batch_means_side_closes_where_woodruffs_interval_first_has_that_end(q, upper):
    t, design = t_quantile(5, 0.95), 1.83
    needed = woodruff_samples_to_close(q, upper, design, t)

    def end(n: int) -> int | None:
        low, high = woodruff_ranks(n, q, math.sqrt(design * q * (1 - q) / n), t)
        return high if upper else low

    assert end(math.floor(needed) - 1) is None and end(math.ceil(needed) + 1) is not None


def test_the_demos_open_p95_is_at_least_woodruffs_closing_point_not_unresolvable():
    # the demo (main 5bca43e): fastserve TTFT p95 45.6 ms (36.7 – open) against 250 ms + 10 %, 183
    # requests, design effect 1.83, batch means over 5 batches: the exact ranks bound p95 from 72
    # samples, but Woodruff's t·se needs ≈ 268: before, "cannot be resolved by length alone"
    t = t_quantile(5, 0.95)
    exact = growth(45.6, 36.7, None, 275.0, n=183, design_effect=1.83, percentile=0.95)
    assert exact.factor is None and "open on the side facing the claim" in exact.why
    found = growth(45.6, 36.7, None, 275.0, n=183, design_effect=1.83, percentile=0.95, batch_t=t)
    assert found.at_least and found.factor == pytest.approx(woodruff_samples_to_close(0.95, True, 1.83, t) / 183)
    item = {**FIGURE, "measured": 45.6, "ci_low": 36.7, "ci_high": None, "claimed": 250.0, "tolerance": 0.1}
    item |= {"n": 183, "design_effect": 1.83, "interval_method": "batch means (5 send-time batches, t)"}
    out = to_resolve(item, 0.95, {"requests": 183, "window_s": 50.0}, batches=5)
    assert out["requests_to_resolve"] == more_samples(183, found.factor) and out["to_resolve"].startswith("at least")


def test_more_samples_is_none_when_the_run_is_already_long_enough():
    assert more_samples(100, 0.5) == 0 and more_samples(100, 1.0) == 0
    assert more_samples(100, 2.0) == 101


FIGURE = {
    "candidate": "c",
    "metric": "ttft_ms_p95",
    "basis": "production_load",
    "claimed": 100.0,
    "measured": 95.0,
    "ci_low": 80.0,
    "ci_high": 105.0,
    "n": 200,
    "verdict": INCONCLUSIVE,
    "tolerance": 0.0,
    "design_effect": 1.5,
}


def test_minutes_are_the_steady_window_grown_by_the_factor():
    out = to_resolve(FIGURE, 0.95, {"requests": 240, "window_s": 120.0})
    assert out["requests_to_resolve"] == more_samples(240, 4.0) == 721
    assert out["minutes_to_resolve"] == pytest.approx(3 * 120.0 / 60)
    assert out["to_resolve"].startswith("≈ 721 more requests (≈ 6 min of this load)")
    assert "design effect 1.5" in out["to_resolve"]


def test_the_vendor_conditions_rate_gives_the_minutes_and_accuracy_has_none():
    vendor = to_resolve({**FIGURE, "basis": "vendor_conditions"}, 0.95, {"requests_per_s": 2.0})
    assert vendor["minutes_to_resolve"] == pytest.approx(vendor["requests_to_resolve"] / 2.0 / 60)
    accuracy = {**FIGURE, "metric": "accuracy", "claimed": 0.9, "measured": 0.92, "ci_low": 0.87, "ci_high": 0.95}
    out = to_resolve(accuracy, 0.95, None)
    assert out["minutes_to_resolve"] is None and "more labelled items" in out["to_resolve"]


def test_only_inconclusive_claimed_figures_get_it_and_a_value_at_the_claim_says_length_cannot():
    holds = {**FIGURE, "verdict": "holds"}
    at_claim = {**FIGURE, "measured": 100.0}
    throughput = [{"candidate": "c", "requests_in_window": 240, "window_s": 120.0}]
    out = with_resolution([holds, at_claim, FIGURE], 0.95, throughput)
    assert "to_resolve" not in out[0]
    assert out[1]["to_resolve"].startswith(CANNOT_BY_LENGTH) and "requests_to_resolve" not in out[1]
    assert out[2]["requests_to_resolve"] == 721


def test_a_repeated_figure_grows_every_run():
    runs = [{"repeat": k, "design_effect": d} for k, d in enumerate([1.0, 2.0, 1.2])]
    repeated = {**FIGURE, "n": 600, "repeats": {"runs": runs}}
    out = to_resolve(repeated, 0.95, {"requests": 240, "window_s": 120.0})
    assert out["requests_to_resolve"] == 3 * 721 and "over its 3 runs" in out["to_resolve"]
    assert out["minutes_to_resolve"] == pytest.approx(3 * 6.0)


def test_the_rule_on_a_simulated_percentile_interval():
    # a real p95 order-statistic interval from exponential samples narrows as predicted: at the
    # predicted length the interval clears the bound in most seeds (the value itself moves too)
    rng = np.random.default_rng(7)
    truth = -math.log(0.05)  # the exponential's p95
    claimed = truth * 1.15  # smaller is better: a claim 15 % above the truth would hold
    first = np.sort(rng.exponential(size=100))
    ranks = order_statistic_ranks(100, 0.95)
    assert ranks.high is not None
    low, high, point = first[ranks.low - 1], first[ranks.high - 1], first[ranks.point - 1]
    assert verdict(claimed, low, high, False) == INCONCLUSIVE
    found = growth(point, low, high, claimed, 100, percentile=0.95)
    total = 100 + more_samples(100, found.factor)
    held = 0
    for _ in range(40):
        sample = np.sort(rng.exponential(size=total))
        r = order_statistic_ranks(total, 0.95)
        held += verdict(claimed, sample[r.low - 1], sample[r.high - 1], False) == "holds"
    assert held >= 16  # about half at the least: the truth is the measured value's neighbour, not it


def test_an_open_side_the_run_is_already_long_enough_to_close_gives_no_estimate():
    # a median of 14 requests whose batch-means interval is open on both sides: 6 samples would bound
    # a median, so length is not what it lacks
    found = growth(11.7, None, None, 13.2, n=14, percentile=0.5)
    assert found.factor is None and "no rate of narrowing" in found.why


def test_a_replay_repeated_until_resolved_that_stopped_undecided_asks_for_more_runs():
    runs = [{"repeat": k, "design_effect": 1.0} for k in range(4)]
    item = {**FIGURE, "n": 800, "repeats": {"runs": runs}, "interval_method": "until resolved: the t-interval …"}
    out = to_resolve(item, 0.95, {"requests": 240, "window_s": 120.0})
    assert out["to_resolve"].startswith("≈ 13 more runs (3,120 requests, ≈ 26 min of this load)")
    assert out["requests_to_resolve"] == 13 * 240 and out["minutes_to_resolve"] == pytest.approx(26.0)


def test_the_pages_state_what_would_resolve_it_beside_the_verdict():
    open_ = figure_row(verdict=INCONCLUSIVE, measured=260.0, ci_low=240.0, ci_high=290.0)
    open_ |= to_resolve(open_, 0.95, {"requests": 400, "window_s": 50.0})
    at_claim = figure_row(candidate="d", verdict=INCONCLUSIVE, measured=275.0, ci_low=250.0, ci_high=300.0)
    at_claim |= to_resolve(at_claim, 0.95, {"requests": 400, "window_s": 50.0})
    # bound 250·1.1 = 275, 15 above the measured 260; the upper side 30 wide: four times as long
    assert open_["requests_to_resolve"] == more_samples(400, 4.0) == 1201
    unsteady = figure_row(candidate="e", verdict=INCONCLUSIVE, measured=200.0, ci_low=190.0, ci_high=210.0)
    unsteady |= {"no_steady_window": "no steady window: a TTFT trend"}
    unsteady |= to_resolve(unsteady, 0.95, {"requests": 400, "window_s": 50.0})
    pack = document([open_, at_claim, unsteady])
    markdown = render_markdown(pack, confidence=0.95)
    assert f"- c `ttft_ms_p95` (production load): {open_['to_resolve']}." in markdown
    assert f"- d `ttft_ms_p95` (production load): {CANNOT_BY_LENGTH}: the measured value sits at" in markdown
    html = render_html(pack, {}, confidence=0.95)
    assert f">needs +{open_['requests_to_resolve']:,} req · " in html and ">not by length<" in html
    assert ">needs a steady window<" in html and "no steady window: a TTFT trend: a replay long enough" in markdown
    jsonschema.validate(pack, json.loads((REPO_ROOT / "schemas" / "evidence_pack.schema.json").read_text()))


def test_a_figure_without_a_steady_window_needs_one_first_and_no_number_has_an_exponent():
    # the demo's shape: an interval that already clears the bound, read over a rejected window
    unsteady = "no steady window: the window is 5.9 s, shorter than its minimum length 332 s"
    cleared = {"metric": "tpot_ms_p50", "claimed": 12.0, "tolerance": 0.1, "measured": 0.02, "ci_low": 0.019}
    cleared |= {"ci_high": 0.021, "n": 200, "design_effect": 1.0, "no_steady_window": unsteady}
    words = to_resolve(cleared, 0.95, {"requests": 200, "window_s": 6.0})
    assert words["requests_to_resolve"] == 0
    assert words["to_resolve"] == (
        f"{unsteady}: a replay long enough to hold a steady window (`workload.sample.window_s`) would resolve it "
        "(its interval already clears the claim)"
    )
    # the setting that lengthens the replay behind the figure's basis: the vendor's arm, the sweep's levels
    arm = to_resolve(cleared | {"basis": "vendor_conditions"}, 0.95, None)["to_resolve"]
    assert "steady window (`workload.replay.arms.waves` (and `max_duration_s`): a closed loop's first wave is" in arm
    level = to_resolve(cleared | {"basis": "capacity_at_sla"}, 0.95, None)["to_resolve"]
    assert "steady window (`workload.replay.sweep.duration_s_per_level` and `requests_per_level`)" in level
    # an interval that also falls short: the steady window first, then the length; a tiny duration in seconds
    short = cleared | {"measured": 13.0, "ci_low": 12.0, "ci_high": 14.0, "n": 40}
    words = to_resolve(short, 0.95, {"requests_per_s": 1.0e6})
    assert words["requests_to_resolve"] > 0
    assert words["to_resolve"].startswith(f"{unsteady}: a replay long enough to hold a steady window")
    assert ", then ≈ " in words["to_resolve"] and "e-0" not in words["to_resolve"] and "e+0" not in words["to_resolve"]
    assert "(≈ under 0.1 s of this load)" in words["to_resolve"]
