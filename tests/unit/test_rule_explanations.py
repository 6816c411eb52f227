"""Every blocking rule check (the ones that are not great-expectations suites) explains a failure
as a suite does: its `explanation` metadata says what it compared, the values it saw and what to
do; a passing one carries no explanation."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.quality import arms as arm_rules
from pipeline.quality import rules
from pipeline.quality.outcome import Outcome, explained
from pipeline.spec.workload import Replay

FAILING = {
    "production_logs_reject_rate": (
        lambda: rules.reject_rate_within_budget(90, 10, 0.05),
        ["workload.max_reject_rate", "reject_rate = 0.1", "budget = 0.05", "data/quarantine.parquet"],
    ),
    "sweep_levels_complete": (
        lambda: rules.sweep_levels_complete([], ["c"], sweeping=True),
        ["a production level per candidate", "c: no production level"],
    ),
    "sweep_summary_consistent": (
        lambda: rules.sweep_summary_consistent(
            [{"candidate": "c", "load_level": 1, "meets_sla": False}],
            [{"candidate": "c", "max_sla_load_level": 1, "first_missing_load_level": None}],
        ),
        ["max_sla_load_level", "c: a level at or below 1 missed the SLA"],
    ),
    "sweep_timings_one_row_per_level_request": (
        lambda: rules.sweep_timings_complete(pa.table({"load_level": [1.0]}), [], Replay()),
        ["that level's plan", "rows = 1"],
    ),
    "figures_consistent": (
        lambda: rules.figures_consistent([], "c", ["ttft_p95_ms"], scored=False),
        ["the claim (a row per claimed figure)", "claimed_without_a_row = ['ttft_p95_ms']", "spec's claim"],
    ),
    "arm_timings_one_row_per_planned_request": (
        lambda: arm_rules.arm_timings_complete([], {"a_vendor_conditions": 2}, "c"),
        ["each arm's plan", "a_vendor_conditions: 0 distinct request(s), planned 2", "run the partition again"],
    ),
    "arm_timings_bounded": (
        lambda: arm_rules.arm_timings_bounded([{"arm": "x", "t_sent_ns": 0, "t_end_ns": 20 * 10**9}], 5, 5),
        ["max_duration_s + one request timeout", "limit_s = 10", "over = {'x': 20.0}", "raise"],
    ),
}


@pytest.mark.parametrize("check", sorted(FAILING))
def test_a_failed_rule_check_says_what_it_compared_the_values_and_what_to_do(check):
    rule, words = FAILING[check]
    outcome = rule()
    assert not outcome.passed
    explanation = outcome.metadata["explanation"]
    assert "; what to do: " in explanation and "\n" not in explanation
    for word in words:
        assert word in explanation, (word, explanation)


def test_a_passing_rule_check_and_one_with_its_own_words_stay_as_they_are():
    assert "explanation" not in rules.reject_rate_within_budget(99, 1, 0.05).metadata
    own = Outcome(False, {"explanation": "its own words"})
    assert explained(own, "x", "y").metadata == {"explanation": "its own words"}
    long = explained(Outcome(False, {"problems": "p" * 1000}), "compared", "do this")
    assert len(long.metadata["explanation"]) < 400 and long.metadata["problems"] == "p" * 1000
