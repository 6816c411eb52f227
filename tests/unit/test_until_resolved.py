"""Repeats until resolved (pipeline/analysis/statistics/until_resolved.py, pipeline/spec/until.py): the spending
functions' boundaries, the looks' α summing to α, the t-interval across runs, the first decisive look
kept, the stop rule, and the spec."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.stats import norm

from pipeline.analysis.statistics.until_resolved import (
    OBRIEN_FLEMING,
    POCOCK,
    across_runs,
    look_alphas,
    settle,
    should_stop,
    spent,
)
from pipeline.spec.until import Until
from pipeline.spec.workload import Replay


@pytest.mark.parametrize("spending", [OBRIEN_FLEMING, POCOCK])
def test_spending_rises_from_nothing_to_the_whole_alpha(spending):
    values = [spent(k / 10, 0.05, spending) for k in range(11)]
    assert values[0] == 0.0 and values[-1] == pytest.approx(0.05)
    assert all(a < b for a, b in zip(values, values[1:], strict=False))


def test_obrien_fleming_boundaries_are_the_textbook_values():
    # α(τ) = 2 − 2Φ(1.96/√τ): at τ = 0.5 the boundary is 1.96·√2 = 2.772, i.e. α = 0.00557
    assert spent(0.5, 0.05) == pytest.approx(2 - 2 * norm.cdf(1.959964 * math.sqrt(2)), rel=1e-6)
    assert spent(0.5, 0.05) == pytest.approx(0.005574, abs=2e-6)
    assert spent(0.25, 0.05) == pytest.approx(8.8e-5, rel=0.02)  # boundary 3.92
    # Pocock type: α·ln(1 + (e − 1)/2) at τ = 0.5
    assert spent(0.5, 0.05, POCOCK) == pytest.approx(0.05 * math.log(1 + (math.e - 1) / 2))


@pytest.mark.parametrize("spending", [OBRIEN_FLEMING, POCOCK])
@pytest.mark.parametrize("max_runs", [2, 5, 10, 20])
def test_the_looks_spend_exactly_alpha_in_all(spending, max_runs):
    alphas = look_alphas(max_runs, 0.05, spending)
    assert sorted(alphas) == list(range(2, max_runs + 1))
    assert sum(alphas.values()) == pytest.approx(0.05)
    assert all(a > 0 for a in alphas.values())


def test_obrien_fleming_keeps_most_for_the_last_look_and_pocock_spreads_it():
    of, pocock = look_alphas(10, 0.05), look_alphas(10, 0.05, POCOCK)
    assert of[2] < 1e-4 and of[10] > 0.01
    assert max(pocock.values()) / min(pocock.values()) < 8 and pocock[2] > of[2] * 100


def test_unknown_spending_and_too_few_runs_are_refused():
    with pytest.raises(ValueError, match="unknown spending"):
        spent(0.5, 0.05, "haybittle")
    with pytest.raises(ValueError, match="at least 2"):
        look_alphas(1, 0.05)


def test_the_interval_across_runs_is_the_t_interval_kept_in_range():
    mean, low, high = across_runs([1.0, 2.0, 3.0], 0.05)
    half = 4.302652729911275 * 1.0 / math.sqrt(3)  # t(2, 0.975)
    assert (mean, low, high) == pytest.approx((2.0, max(2 - half, 0.0), 2 + half))
    assert across_runs([0.97, 0.99, 0.995], 0.05, fraction=True)[2] == 1.0


def test_a_figure_is_kept_at_its_first_decisive_look():
    # runs at 100, 101, 99, 100, 100.5 ms against a claim of 130 ms (smaller is better): decisive early
    alphas = look_alphas(5, 0.05)
    values = {"ttft_ms_p95": [100.0, 101.0, 99.0, 100.0, 100.5]}
    settled = settle(values, {"ttft_ms_p95": (130.0, False, 0.0, False)}, alphas)
    first = settled["ttft_ms_p95"]
    assert first.verdict == "holds" and first.runs < 5 and first.alpha == alphas[first.runs]


def test_a_figure_at_its_claim_runs_to_the_last_look_inconclusive():
    alphas = look_alphas(4, 0.05)
    settled = settle({"x": [99.0, 101.0, 100.5, 99.5]}, {"x": (100.0, True, 0.0, False)}, alphas)
    assert settled["x"].verdict == "inconclusive" and settled["x"].runs == 4
    assert not should_stop(settled, 3, 4, 1.0, 30.0)
    assert should_stop(settled, 4, 4, 1.0, 30.0) and should_stop(settled, 3, 4, 31.0, 30.0)


def test_looking_after_every_run_keeps_wrong_verdicts_within_alpha():
    # claim = truth, tolerance 10 %: "not reproduced" is wrong. 20,000 seeded sequences of 10 runs
    # (normal run values, sd 8 % of the truth): the spending keeps the wrong share at or under α/2
    # (one side), where judging every look at the full 95 % would not.
    rng = np.random.default_rng(3)
    alphas, naive = look_alphas(10, 0.05), dict.fromkeys(range(2, 11), 0.05)
    wrong = wrong_naive = 0
    trials = 4000
    for _ in range(trials):
        values = {"x": list(100.0 + 8.0 * rng.standard_normal(10))}
        claims = {"x": (100.0, False, 0.0, False)}  # smaller is better, no tolerance: at the claim
        wrong += settle(values, claims, alphas)["x"].verdict == "not reproduced"
        wrong_naive += settle(values, claims, naive)["x"].verdict == "not reproduced"
    assert wrong / trials <= 0.025 + 0.006
    assert wrong_naive / trials > 0.04  # nine looks at the full α inflate it


def test_the_spec_reads_the_word_and_the_bounds():
    assert Until.model_validate("resolved") == Until()
    until = Until.model_validate({"when": "resolved", "max_runs": 6, "max_minutes": 12, "spending": "pocock"})
    assert (until.max_runs, until.max_minutes, until.spending) == (6, 12.0, "pocock")
    with pytest.raises(ValidationError, match="max_runs"):
        Until.model_validate({"max_runs": 1})
    with pytest.raises(ValidationError, match="until and repeats"):
        Replay.model_validate({"until": "resolved", "repeats": 3})
    assert Replay.model_validate({"until": "resolved"}).until == Until()


def test_runs_all_equal_judge_on_the_hull_of_their_own_intervals_never_a_zero_width_interval():
    # accuracy 160/200 in both runs: a t-interval of zero width would call a claim of 0.81 not reproduced
    alphas = look_alphas(5, 0.05)
    claims = {"accuracy": (0.81, True, 0.0, True)}
    bare = settle({"accuracy": [0.8, 0.8]}, claims, alphas)["accuracy"]
    assert bare.verdict == "inconclusive" and bare.ci_low is None
    own = {"accuracy": [(0.74, 0.85), (0.73, 0.86)]}
    hull = settle({"accuracy": [0.8, 0.8]}, claims, alphas, own)["accuracy"]
    assert (hull.ci_low, hull.ci_high, hull.verdict) == (0.73, 0.86, "inconclusive")
    wide_claim = settle({"accuracy": [0.8, 0.8]}, {"accuracy": (0.95, True, 0.0, True)}, alphas, own)["accuracy"]
    assert wide_claim.verdict == "not reproduced"  # the runs' own intervals decide, as fixed repeats would
