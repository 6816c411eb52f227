"""The measured proxy verdict and the executive summary (issue 15, items 5 and 6), from hand-built
figures (each with its basis) and a hand-built headline waterfall; no I/O."""

from pipeline.analysis import metrics
from pipeline.pack.assemble import summary
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
    assert reasons[0].startswith("the buyer's prompt lengths moved output_tokens_per_s by -50%")
    assert any("at the capacity at the SLA" in reason for reason in reasons)


def test_a_claim_not_reproduced_at_the_vendors_conditions_must_be_re_measured():
    verdict = summary.measured_proxy_verdict(figures(3000, "not reproduced", 4000), [], 1.25)
    assert verdict["verdict"] == RE_MEASURE
    assert verdict["reasons"] == [
        "a: output_tokens_per_s at the vendor's conditions: measured 3,000 vs claimed 4,200 (not reproduced)"
    ]


def test_the_executive_summary_has_five_lines_per_candidate():
    (entry,) = summary.executive_summary(figures(4400, "holds", 3600), WATERFALL)
    lines = entry["lines"]
    assert entry["candidate"] == "a" and len(lines) == 5
    assert lines[0] == "At the vendor's conditions: output_tokens_per_s holds, ttft_ms_p95 holds"
    assert lines[1] == "At the buyer's production load: ttft_ms_p95 holds"  # served demand is not a verdict
    assert "30 requests/s, 3,600 output tokens/s" in lines[2] and "at load 8×" in lines[2]
    assert lines[3] == (
        "Cost per useful decision: 0.4 USD per 1,000 at the production load, 0.1 USD per 1,000 at the capacity "
        "at the SLA"
    )
    assert lines[4] == "Moved the headline most: the buyer's prompt lengths moved output_tokens_per_s by -50%"


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
    assert reasons[0] == "the buyer's output lengths moved output_tokens_per_s by -9%"
    assert reasons[1].endswith("by -50% (not resolved: its interval includes no change)")
    (entry,) = summary.executive_summary(figures(4400, "holds", 3600), waterfall)
    assert entry["lines"][4] == "Moved the headline most: the buyer's output lengths moved output_tokens_per_s by -9%"
