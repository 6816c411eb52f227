"""Wilson intervals and verdicts, with hand-computed answers."""

import pytest

from pipeline.stats import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, verdict, wilson_interval


def test_wilson_interval_matches_the_textbook_value():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_interval_edges():
    assert wilson_interval(0, 0) == (None, None)
    assert wilson_interval(0, 50)[0] == 0.0
    assert wilson_interval(50, 50)[1] == 1.0


def test_verdict_for_larger_is_better():
    assert verdict(100, ci_low=110, ci_high=130, larger_is_better=True) == HOLDS
    assert verdict(100, ci_low=60, ci_high=90, larger_is_better=True) == NOT_REPRODUCED
    assert verdict(100, ci_low=90, ci_high=110, larger_is_better=True) == INCONCLUSIVE


def test_verdict_for_smaller_is_better():
    assert verdict(250, ci_low=20, ci_high=40, larger_is_better=False) == HOLDS
    assert verdict(250, ci_low=300, ci_high=400, larger_is_better=False) == NOT_REPRODUCED


def test_an_unbounded_side_is_inconclusive_and_no_claim_has_no_verdict():
    # p99 of a short run: no order statistic above the claim, so it cannot hold.
    assert verdict(4000, ci_low=2000, ci_high=None, larger_is_better=False) == INCONCLUSIVE
    assert verdict(None, ci_low=1, ci_high=2, larger_is_better=False) is None
