"""Wilson intervals and verdicts, with hand-computed answers."""

import pytest

from pipeline.analysis.statistics.stats import (
    HOLDS,
    HOLDS_WITHIN_TOLERANCE,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    verdict,
    wilson_interval,
)


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


def test_tolerance_verdicts_for_larger_is_better():
    """DESIGN.md's words: holds at or above C; within tolerance at or above C·(1 − t) but not all
    above C; not reproduced wholly below C·(1 − t); inconclusive otherwise (C 4,200, t 10 %: 3,780)."""
    assert verdict(4200, 4200, 4500, True, 0.10) == HOLDS
    assert verdict(4200, 3900, 4100, True, 0.10) == HOLDS_WITHIN_TOLERANCE  # 3,990 with a tight interval
    assert verdict(4200, 3780, 4300, True, 0.10) == HOLDS_WITHIN_TOLERANCE  # at the bound, reaching past C
    assert verdict(4200, 0, 2673, True, 0.10) == NOT_REPRODUCED  # 990 with a wide interval
    assert verdict(4200, 3700, 3779, True, 0.10) == NOT_REPRODUCED
    assert verdict(4200, 3700, 3900, True, 0.10) == INCONCLUSIVE  # straddles the bound
    assert verdict(4200, 3900, 4100, True) == NOT_REPRODUCED  # no tolerance: the words before tolerances
    assert verdict(4200, None, 4100, True, 0.10) == INCONCLUSIVE  # an open low end supports no hold


def test_tolerance_verdicts_for_smaller_is_better_are_mirrored():
    """C 250 ms, t 10 %: up to 275 ms holds within tolerance."""
    assert verdict(250, 200, 250, False, 0.10) == HOLDS
    assert verdict(250, 240, 275, False, 0.10) == HOLDS_WITHIN_TOLERANCE
    assert verdict(250, 276, 300, False, 0.10) == NOT_REPRODUCED
    assert verdict(250, 260, 290, False, 0.10) == INCONCLUSIVE
    assert verdict(250, 240, None, False, 0.10) == INCONCLUSIVE  # an open high end supports no hold


def test_an_unbounded_side_is_inconclusive_and_no_claim_has_no_verdict():
    # p99 of a short run: no order statistic above the claim, so it cannot hold.
    assert verdict(4000, ci_low=2000, ci_high=None, larger_is_better=False) == INCONCLUSIVE
    assert verdict(None, ci_low=1, ci_high=2, larger_is_better=False) is None


# --- exact order-statistic intervals and MLPerf LoadGen's early-stopping rule ---------------

from pipeline.analysis.declare.metrics import PERCENTILES  # noqa: E402
from pipeline.analysis.statistics.stats import early_stopping_min_queries, one_sided_confidence, order_statistic_ranks  # noqa: E402


def test_order_statistic_ranks_by_hand():
    # Binom(10, 0.5): P(≤1) = 11/1024 ≤ 0.025 < P(≤2); P(≤7) = 968/1024 < 0.975 ≤ P(≤8) = 1013/1024
    ranks = order_statistic_ranks(10, 0.5, 0.95)
    assert (ranks.point, ranks.low, ranks.high) == (5, 2, 9)
    # n = 1: no interval at all
    assert order_statistic_ranks(1, 0.5) == order_statistic_ranks(1, 0.5).__class__(point=1, low=None, high=None)


def test_loadgen_minimum_queries_for_a_percentile():
    # No overlatency query: p^h ≤ 1 − c, so h = ceil(ln 0.01 / ln 0.99) = 459 for p99 at 99 %
    # (LoadGen's own seed value), ceil(ln 0.01 / ln 0.9) = 44 for p90.
    assert early_stopping_min_queries(0.99, 0, 0.99) == 459
    assert early_stopping_min_queries(0.90, 0, 0.99) == 44
    # One overlatency query: the smallest h with (h+1)·0.99^h·0.01 + 0.99^(h+1) ≤ 0.01
    h = next(h for h in range(1, 5000) if (h + 1) * 0.99**h * 0.01 + 0.99 ** (h + 1) <= 0.01)
    assert early_stopping_min_queries(0.99, 1, 0.99) == h == 661


def test_holding_by_the_interval_is_exactly_loadgens_early_stopping():
    """ci_high ≤ claim ⟺ n ≥ h_min(t) + t, where t samples exceed the claim (no ties at it)."""
    confidence = 0.95
    for q in PERCENTILES.values():
        for n in (1, 5, 20, 45, 59, 100, 300, 368, 1000):
            for over in range(0, min(n, 12)):
                ranks = order_statistic_ranks(n, q, confidence)
                by_interval = ranks.high is not None and ranks.high <= n - over  # X(high) ≤ claim
                by_loadgen = n >= early_stopping_min_queries(q, over, one_sided_confidence(confidence)) + over
                assert by_interval == by_loadgen, (q, n, over)


def test_a_run_too_short_for_a_percentile_claim_is_inconclusive():
    # 100 requests, every TTFT far below a claimed p99 of 250 ms: still too few to say it holds
    # (a p99 claim needs 368 samples at 97.5 % one-sided, LoadGen's rule).
    values = [10.0 + i * 0.1 for i in range(100)]
    ranks = order_statistic_ranks(len(values), 0.99)
    ci_low = values[ranks.low - 1] if ranks.low else None
    ci_high = values[ranks.high - 1] if ranks.high else None
    assert ci_high is None
    assert verdict(250, ci_low, ci_high, larger_is_better=False) == INCONCLUSIVE
    assert early_stopping_min_queries(0.99, 0, one_sided_confidence(0.95)) == 368
    # 400 such requests are enough: the claim holds
    values = [10.0 + i * 0.1 for i in range(400)]
    ranks = order_statistic_ranks(len(values), 0.99)
    assert verdict(250, values[ranks.low - 1], values[ranks.high - 1], larger_is_better=False) == HOLDS


def test_peak_concurrency_by_hand():
    import numpy as np

    from pipeline.analysis.statistics.stats import peak_concurrency

    # [0,10) [2,5) [3,4) [5,8): three overlap at 3..4; the send at 5 meets an end at 5, not counted
    assert peak_concurrency(np.array([0, 2, 3, 5]), np.array([10, 5, 4, 8])) == 3
    assert peak_concurrency(np.array([0, 0, 0]), np.array([1, 1, 1])) == 3  # simultaneous sends
    assert peak_concurrency(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == 0


def test_peak_concurrency_equals_a_count_at_every_send_with_ties():
    import numpy as np

    from pipeline.analysis.statistics.stats import peak_concurrency

    rng = np.random.default_rng(7)
    for _ in range(50):
        sends = rng.integers(0, 20, 40)  # many sends share an instant, and ends meet sends
        ends = sends + rng.integers(0, 10, 40)
        by_hand = max(int((sends <= at).sum() - (ends <= at).sum()) for at in sends)
        assert peak_concurrency(sends, ends) == by_hand
