"""The measured proxy verdict and the executive summary (issue 15, items 5 and 6), from hand-built
figures (each with its basis) and a hand-built headline waterfall; no I/O."""

import pytest

from pipeline.analysis.declare import metrics
from pipeline.pack.assemble import claim_words, summary
from pipeline.workload.divergence import GOOD_ENOUGH, RE_MEASURE


def fig(candidate, metric, basis, measured, claimed=None, verdict=None, **extra) -> dict:
    low, high = (None, None) if measured is None else (measured * 0.95, measured * 1.05)
    return {
        "candidate": candidate,
        "metric": metric,
        "basis": basis,
        "claimed": claimed,
        "measured": measured,
        "ci_low": low,
        "ci_high": high,
        "verdict": verdict,
        **extra,
    }


def figures(vendor_tokens: float, vendor_verdict: str, capacity_tokens: float) -> list[dict]:
    return [
        fig("a", "output_tokens_per_s", metrics.PRODUCTION_LOAD, 310, 4200, None, not_judged="served demand"),
        fig("a", "ttft_ms_p95", metrics.PRODUCTION_LOAD, 40, 250, "holds"),
        fig("a", "cost_per_decision_usd", metrics.PRODUCTION_LOAD, 0.0004),
        fig("a", "output_tokens_per_s", metrics.VENDOR_CONDITIONS, vendor_tokens, 4200, vendor_verdict),
        fig("a", "ttft_ms_p95", metrics.VENDOR_CONDITIONS, 180, 250, "holds"),
        fig("a", "output_tokens_per_s", metrics.CAPACITY_AT_SLA, capacity_tokens, 4200, "holds", load_level_label="8×"),
        fig("a", "requests_per_s", metrics.CAPACITY_AT_SLA, 30, None, None, load_level_label="8×"),
        fig("a", "cost_per_decision_at_max_sla_load_usd", metrics.CAPACITY_AT_SLA, 0.0001),
    ]


WATERFALL = [
    {
        "candidate": "a",
        "metric": "output_tokens_per_s",
        "claimed": 4200,
        "steps": [
            {"axis": "vendor_conditions", "label": "the vendor's conditions", "measured": 4400},
            {
                "axis": "prompt_lengths",
                "label": "the buyer's prompt lengths",
                "measured": 2200,
                "change_ci_low": -2500,
                "change_ci_high": -1900,
            },
            {
                "axis": "output_lengths",
                "label": "the buyer's output lengths",
                "measured": 2000,
                "change_ci_low": -300,
                "change_ci_high": -100,
            },
            {"axis": "production load", "label": "served demand", "measured": 300},
        ],
    }
]


def test_without_a_vendor_conditions_arm_the_rule_stands():
    only_production = [f for f in figures(4400, "holds", 4000) if f["basis"] != metrics.VENDOR_CONDITIONS]
    assert summary.measured_proxy_verdict(only_production, WATERFALL, 1.25) is None


def test_a_claim_that_reproduces_and_a_capacity_within_tolerance_is_a_good_enough_proxy():
    verdict = summary.measured_proxy_verdict(figures(4400, "holds", 3600), WATERFALL, 1.25)
    assert verdict["verdict"] == GOOD_ENOUGH and verdict["basis"] == summary.MEASURED
    assert [c["verdict"] for c in verdict["candidates"]] == [GOOD_ENOUGH]


def test_a_capacity_far_below_the_claim_must_be_re_measured_with_the_largest_move_first():
    verdict = summary.measured_proxy_verdict(figures(4400, "holds", 2000), WATERFALL, 1.25)
    assert verdict["verdict"] == RE_MEASURE
    reasons = verdict["candidates"][0]["reasons"]
    assert reasons[0].startswith("the buyer's prompt lengths moved Output tokens/s by -50%")
    assert reasons[-1] == (
        "Output tokens/s at your SLA: 2,000 tokens/s, below 4,200 tokens/s claimed ÷ 1.25 "
        "(workload.proxy_tolerance.capacity_ratio)"
    )


def test_a_claim_not_reproduced_at_the_vendors_conditions_must_be_re_measured():
    verdict = summary.measured_proxy_verdict(figures(3000, "not reproduced", 4000), [], 1.25)
    assert verdict["verdict"] == RE_MEASURE
    assert verdict["reasons"] == [
        "a: Output tokens/s: 4,200 tokens/s claimed, 3,000 (2,850 – 3,150) at the vendor's own conditions: "
        "not reproduced"
    ]


def test_the_executive_summary_has_five_lines_per_candidate():
    (entry,) = summary.executive_summary(figures(4400, "holds", 3600), WATERFALL)
    lines = entry["lines"]
    assert entry["candidate"] == "a" and len(lines) == 5
    # a summary by verdict; each claim's numbers and interval are the tables'
    assert lines[0] == (
        "Claims at the vendor's own conditions: all 2 claims hold; at your SLA: Output tokens/s 3,600 vs "
        "4,200 tokens/s claimed: holds"
    )
    # served demand is not a verdict
    assert lines[1] == "At your production load: TTFT p95 40 vs 250 ms claimed: holds"
    assert "30 requests/s, 3,600 output tokens/s" in lines[2] and "at load 8×" in lines[2]
    assert lines[3] == (
        "Cost per useful decision: 0.4 USD per 1,000 at the production load, 0.1 USD per 1,000 at the capacity "
        "at the SLA"
    )
    assert lines[4] == "Moved the headline most: the buyer's prompt lengths moved Output tokens/s by -50%"


def test_a_move_its_interval_does_not_resolve_comes_after_a_resolved_one_and_says_so():
    steps = [
        {"axis": "vendor_conditions", "label": "the vendor's conditions", "measured": 4400},
        # -50 %, but its interval holds no change at all (a handful of requests in the window)
        {"axis": "prompt_lengths", "label": "the buyer's prompt lengths", "measured": 2200},
        {"axis": "output_lengths", "label": "the buyer's output lengths", "measured": 2000},
        {"axis": "production load", "label": "served demand", "measured": 300},
    ]
    steps[1].update(change=-2200, change_ci_low=-5000, change_ci_high=600)
    steps[2].update(change=-200, change_ci_low=-300, change_ci_high=-100)
    waterfall = [{"candidate": "a", "metric": "output_tokens_per_s", "claimed": 4200, "steps": steps}]
    ranked = summary.moves(waterfall, "a")
    assert [(m["axis"], m["resolved"]) for m in ranked] == [("output_lengths", True), ("prompt_lengths", False)]
    reasons = summary.measured_proxy_verdict(figures(4400, "holds", 2000), waterfall, 1.25)["candidates"][0]["reasons"]
    assert reasons[0] == "the buyer's output lengths moved Output tokens/s by -9%"
    # what failed comes before a move no interval resolves
    assert reasons[1].startswith("Output tokens/s at your SLA: 2,000 tokens/s, below")
    assert reasons[2].endswith("by -50% (not resolved: its interval includes no change)")
    (entry,) = summary.executive_summary(figures(4400, "holds", 3600), waterfall)
    assert entry["lines"][4] == "Moved the headline most: the buyer's output lengths moved Output tokens/s by -9%"


def below_the_load(pricing_method: str) -> list[dict]:
    """A candidate that carries 0.31× of the production load at the SLA: 4 replicas carry all of it."""
    return [
        fig("b", "output_tokens_per_s", metrics.CAPACITY_AT_SLA, 90, load_level_label="0.31×"),
        fig("b", "requests_per_s", metrics.CAPACITY_AT_SLA, 0.4, load_level_label="0.31×"),
        fig("b", "cost_per_decision_usd", metrics.PRODUCTION_LOAD, 0.0009),
        fig("b", "cost_per_decision_at_max_sla_load_usd", metrics.CAPACITY_AT_SLA, 0.00073),
        fig("b", "capacity_fraction", metrics.CAPACITY_AT_SLA, 0.31) | {"ci_low": 0.31, "ci_high": 0.372},
        fig("b", "replicas_at_sla", metrics.CAPACITY_AT_SLA, 4) | {"ci_low": 3, "ci_high": 4},
        fig("b", "replicas_at_sla_peak", metrics.CAPACITY_AT_SLA, 7) | {"ci_low": 6, "ci_high": 7},
        fig("b", "cost_per_decision_at_sla_replicas_usd", metrics.CAPACITY_AT_SLA, 0.00091)
        | {"interval_method": pricing_method},
    ]


def test_below_the_production_load_the_capacity_line_gives_the_fraction_and_the_replicas():
    method = "the cost at the capacity (Wilson bounds of the useful share) × 4 replicas × 0.31 (per-hour price: "
    method += "scales with replicas)"
    (entry,) = summary.executive_summary(below_the_load(method), [])
    capacity, cost = entry["lines"][2], entry["lines"][3]
    assert capacity.startswith(
        "Capacity at the SLA: carries 0.31× of your load (0.31 – 0.372): 4 replicas (3 – 4), "
        "7 replicas (6 – 7) at its peak; 0.4 requests/s, 90 output tokens/s"
    )
    assert cost == (
        "Cost per useful decision: 0.9 USD per 1,000 at the production load, 0.73 USD per 1,000 at the capacity at "
        "the SLA, 0.91 USD per 1,000 at 4 replicas (per-hour price: scales with replicas)"
    )


def test_a_capacity_read_over_a_level_with_no_steady_window_says_so_against_the_claim():
    figures = below_the_load("the cost at the capacity")
    figures[0] |= {"claimed": 4200, "verdict": "inconclusive", "tolerance": 0.1}
    (entry,) = summary.executive_summary(figures, [])
    assert entry["lines"][2].endswith("against the claimed 4,200 tokens/s: inconclusive")  # its tolerance: the glossary
    figures[0]["no_steady_window"] = "no steady window: the window is 3.92 s, shorter than its minimum length 6.84 s"
    (entry,) = summary.executive_summary(figures, [])
    assert entry["lines"][2].endswith("against the claimed 4,200 tokens/s: inconclusive (no steady window)")


def test_a_per_token_price_says_it_does_not_scale():
    method = "the cost at the capacity (Wilson bounds of the useful share) (per-token price: does not scale with "
    method += "replicas)"
    (entry,) = summary.executive_summary(below_the_load(method), [])
    assert entry["lines"][3].endswith("at 4 replicas (per-token price: does not scale with replicas)")


def test_where_no_level_met_the_capacity_line_says_why():
    reason = "no load level met the SLA (even one request at a time misses the SLA (at 1 in flight, clearly missed))"
    tokens = fig("c", "output_tokens_per_s", metrics.CAPACITY_AT_SLA, None, reason=reason)
    (entry,) = summary.executive_summary([tokens, fig("c", "requests_per_s", metrics.CAPACITY_AT_SLA, None)], [])
    assert entry["lines"][2] == f"Capacity at the SLA: unknown: {reason}"


THROUGHPUT_SOURCE = "claim.tolerance.throughput, default: independent reproductions land 6–14 % below"


def test_a_claim_in_words_names_it_from_the_catalogue_with_each_basis_numbers_and_verdict():
    judged = {"verdict": "not reproduced", "tolerance": 0.1, "tolerance_source": THROUGHPUT_SOURCE}
    vendor = fig("a", "output_tokens_per_s", metrics.VENDOR_CONDITIONS, 990, 4200, **judged)
    capacity = fig("a", "output_tokens_per_s", metrics.CAPACITY_AT_SLA, 1589, 4200, **judged)
    vendor.update(ci_low=0.0, ci_high=2673.4)
    capacity.update(ci_low=1064.2, ci_high=2113.0)
    assert claim_words.claim_line([vendor, capacity]) == (
        "Output tokens/s: 4,200 tokens/s claimed, 990 (0 – 2,673) at the vendor's own conditions, 1,589 "
        "(1,064 – 2,113) at your SLA: not reproduced"
    )
    capacity["verdict"] = "holds within tolerance"  # the verdicts differ: each measurement says its own
    assert claim_words.claim_line([vendor, capacity]) == (
        "Output tokens/s: 4,200 tokens/s claimed, 990 (0 – 2,673) at the vendor's own conditions: not reproduced, "
        "1,589 (1,064 – 2,113) at your SLA: holds within tolerance"
    )


def test_a_claim_no_run_measured_says_why_and_an_open_end_is_not_estimable():
    unjudged = fig("a", "output_tokens_per_s", metrics.CAPACITY_AT_SLA, None, 4200, "inconclusive")
    unjudged.update(reason="no capacity search ran (workload.replay.sweep)", tolerance=0.1)
    assert claim_words.claim_line([unjudged]) == (
        "Output tokens/s: 4,200 tokens/s claimed, not measured at your SLA (no capacity search ran "
        "(workload.replay.sweep)): inconclusive"
    )
    short = fig("a", "ttft_ms_p99", metrics.PRODUCTION_LOAD, 400, 250, "inconclusive", tolerance=0.1)
    short.update(ci_high=None, n=120)
    assert claim_words.claim_line([short], at=False) == (
        "TTFT p99: 250 ms claimed, 400 (≥ 380, its upper end not estimable from 120 requests) measured: inconclusive"
    )
    # far above the claim, but read over a window the steady-state tests rejected: the words say why
    unsteady = fig("a", "ttft_ms_p95", metrics.VENDOR_CONDITIONS, 6766, 250, "inconclusive", tolerance=0.1)
    unsteady["no_steady_window"] = "no steady window: fewer than 5 of 20 spans of the window hold a successful request"
    assert claim_words.claim_line([unsteady]).endswith(
        "at the vendor's own conditions: inconclusive (no steady window)"
    )


def test_a_claim_within_its_tolerance_at_the_vendors_conditions_reproduces():
    within = figures(4000, "holds within tolerance", 3600)
    verdict = summary.measured_proxy_verdict(within, WATERFALL, 1.25)
    assert verdict["verdict"] == GOOD_ENOUGH
    assert "(within its tolerance)" in verdict["reasons"][0]


def test_with_neither_the_vendors_conditions_nor_a_capacity_search_the_first_line_says_what_would_run_them():
    at_load = [f for f in figures(4400, "holds", 3600) if f["basis"] == metrics.PRODUCTION_LOAD]
    (entry,) = summary.executive_summary(at_load, [])
    assert entry["lines"][0] == summary.CLAIMS_LINE + summary.NOT_RUN
    assert "workload.replay.sweep" in entry["lines"][0] and "workload.replay.arms" in entry["lines"][0]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (15960.4, "15,960"),
        (4200, "4,200"),
        (990.44, "990.4"),
        (21.4849, "21.48"),
        (0.0323649, "0.03236"),
        (0.00001234, "0.00001234"),
        (0, "0"),
        (None, "—"),
        (999.96, "1,000"),
        (1.5, "1.5"),
    ],
)
def test_numbers_in_words_never_use_an_exponent(value, words):
    assert claim_words.number(value) == words


def test_without_the_vendors_arm_the_first_line_names_only_the_sla_and_every_dash_says_why():
    no_search = "no capacity search ran: a capacity claim is judged at the capacity at the SLA (workload.replay.sweep)"
    at_load = [f for f in figures(4400, "holds", 3600) if f["basis"] == metrics.PRODUCTION_LOAD]
    unmeasured = fig("a", "output_tokens_per_s", metrics.CAPACITY_AT_SLA, None, 4200, "inconclusive", reason=no_search)
    (entry,) = summary.executive_summary([*at_load, unmeasured], [])
    assert entry["lines"][0] == f"Claims at your SLA: Output tokens/s not measured ({no_search}): inconclusive"
    assert "vendor" not in entry["lines"][0].split(":")[0]
    assert entry["lines"][3] == (
        "Cost per useful decision: 0.4 USD per 1,000 at the production load, — USD per 1,000 (no capacity search "
        "ran (workload.replay.sweep)) at the capacity at the SLA"
    )
    with_sla = figures(4400, "holds", 3600)  # both ran: the title names both
    both = summary.executive_summary(with_sla, WATERFALL)[0]["lines"][0]
    assert both.startswith("Claims at the vendor's own conditions: ") and "; at your SLA: " in both
    vendor_only = [f for f in with_sla if f["basis"] != metrics.CAPACITY_AT_SLA]
    first = summary.executive_summary(vendor_only, WATERFALL)[0]["lines"][0]
    assert first.startswith("Claims at the vendor's own conditions: ")


def test_an_open_interval_is_never_infinite_it_says_what_would_resolve_it():
    """Issue 42 item 5: never print `(−∞ – ∞)`; say `not estimable from n requests (m needed)`
    where the figure has requests_to_resolve, else `not estimable from n requests`."""
    open_high = fig("a", "ttft_ms_p95", metrics.VENDOR_CONDITIONS, 6765, 250, "inconclusive")
    open_high |= {"ci_low": 6607, "ci_high": None, "n": 80, "requests_to_resolve": 368}
    words = claim_words.measured_words(open_high)
    assert "∞" not in words
    assert "not estimable from 80 requests (368 needed)" in words
    no_plan = open_high | {"ci_low": None, "requests_to_resolve": None}
    assert "(not estimable from 80 requests)" in claim_words.measured_words(no_plan)
    assert claim_words.interval_words(0, 2673) == "(0 – 2,673)"
