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
        "Capacity at the SLA: carries 0.31× of your load at the SLA (0.31 – 0.372): 4 replicas (3 – 4), "
        "7 replicas (6 – 7) at its peak; 0.4 requests/s, 90 output tokens/s"
    )
    assert cost == (
        "Cost per useful decision: 0.9 USD per 1,000 at the production load, 0.73 USD per 1,000 at the capacity at "
        "the SLA, 0.91 USD per 1,000 at 4 replicas (per-hour price: scales with replicas)"
    )


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
