"""Intervals that allow for dependence between the values of one run: batch means over send time.

The exact order-statistic interval (`stats.order_statistic_ranks`) and the Wilson interval
assume independent draws. Under load they are not: requests sent close together queue together
(TTFT, E2E, SLA attainment are autocorrelated), and the inter-token gaps of one request share its
batch companions (ITL is clustered by request). Both make the independent interval too narrow.

The steady-state window is cut into `analysis.interval_batches` equal spans of send time, and
each request (with all of its gaps) falls in the batch of its send time. A figure's standard
error is then estimated from how much the batches disagree (batch means; Schmeiser 1982, with
Student's t on batches − 1 degrees of freedom): correlation within a batch, and clustering
within a request, widen it as they should, while batches far apart in time are close to
independent.

- A percentile uses Woodruff's interval (1952): the standard error of the empirical CDF at the
  point estimate is the ratio estimator's over the batches (values at or below it ÷ values),
  and the interval is every value whose empirical CDF lies within t·se of q, read off as order
  statistics (the same ranks machinery as the exact method). Its low end is then moved down to
  where the test of F(x) = q is inverted with the standard error at x itself, not at the point:
  a run that caught one long queueing episode holds most values above its point in one batch, so
  the spread at a lower x is far larger than at the point, and Woodruff's low end (a symmetric
  Wald interval on a skewed statistic) sat above the truth far more often than 2.5 % of runs
  (`bench/ci_coverage.py`, 120-s runs at 85 % load: TTFT p99 covered 0.86, and claimed at its
  truth read *not reproduced* in 8 % of runs; with the inverted low end 0.975 and none).
- A rate (tokens/s, goodput) is the mean of the batches' rates, with a t interval.
- A proportion (SLA attainment) is the ratio estimator with a t interval.

Each figure keeps the wider of the two intervals, end by end: the independent one (exact, or
Wilson) and the batch-means one. A figure never gets narrower than its exact interval; the exact
one stands where the batches agree more closely than independent draws would (and where there
are too few values in a tail for batches to say anything, the exact method's open end stays
open). The method that set the interval is named per figure. Few, long batches (5 by default)
suit a short replay: under heavy load queueing episodes last tens of seconds, and batches shorter
than that would look independent when they are not; Student's t pays for their small number.
`bench/ci_coverage.py` measures the coverage of the result, and where it falls short.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from scipy.stats import t as student_t

from pipeline.analysis.statistics.stats import OrderStatisticRanks

EXACT = "order statistic"
WILSON = "Wilson"
BATCH_MEANS = "batch means"


def batch_means_label(batches: int, low_end_inverted: bool = False) -> str:
    """How a batch-means interval is named in the pack (`interval_method`)."""
    inverted = "; low end by test inversion" if low_end_inverted else ""
    return f"{BATCH_MEANS} ({batches} send-time batches, t{inverted})"


def t_quantile(batches: int, confidence: float) -> float | None:
    """Student's two-sided quantile on batches − 1 degrees of freedom; None below 2 batches."""
    if batches < 2:
        return None
    return float(student_t.ppf(1 - (1 - confidence) / 2, batches - 1))


def ratio_standard_error(below: Iterable[int], total: Iterable[int], batches: int) -> tuple[float, float] | None:
    """(share, its standard error) of Σ below ÷ Σ total over `batches` batches (the batches
    missing from the lists held nothing): the ratio estimator's linearised variance,
    B/(B − 1) · Σ (a_b − p·m_b)² / (Σ m)². None without two batches or any value."""
    pairs = list(zip(below, total))
    values = sum(m for _, m in pairs)
    if batches < 2 or values == 0:
        return None
    share = sum(a for a, _ in pairs) / values
    spread = sum((a - share * m) ** 2 for a, m in pairs)
    return share, math.sqrt(batches / (batches - 1) * spread) / values


def design_effect(share: float, standard_error: float, values: int) -> float | None:
    """The batch-means variance over the independent (binomial) one: 1 for independent draws,
    about the mean cluster size for gaps that move together within their request."""
    binomial = share * (1 - share) / values
    return standard_error**2 / binomial if binomial > 0 else None


def woodruff_ranks(n: int, q: float, standard_error: float, t: float) -> tuple[int | None, int | None]:
    """1-based ranks of the order statistics whose empirical CDF lies q ∓ t·se from q: the
    Woodruff interval. An end is None when it falls outside the sample (unbounded)."""
    low_share, high_share = q - t * standard_error, q + t * standard_error
    low = max(1, math.ceil(n * low_share - 1e-9)) if low_share > 0 else None
    high = math.ceil(n * high_share - 1e-9) if high_share < 1 else None
    return low, (high if high is not None and high <= n else None)


def inverted_low_rank(n: int, q: float, standard_error_at_low: float, t: float) -> int | None:
    """The low rank the inverted test reaches from the current low end x: the order statistic
    whose empirical CDF lies t·se(x) below q, se taken at x (its batches' spread there), not at
    the point. None (unbounded) when that is at or below 0."""
    low_share = q - t * standard_error_at_low
    return max(1, math.ceil(n * low_share - 1e-9)) if low_share > 0 else None


def wider_ranks(exact: OrderStatisticRanks, low: int | None, high: int | None) -> tuple[int | None, int | None, bool]:
    """Each end the wider of the exact and the batch-means rank (None, unbounded, wins); and
    whether the batch-means interval widened either end."""
    new_low = None if exact.low is None or low is None else min(exact.low, low)
    new_high = None if exact.high is None or high is None else max(exact.high, high)
    return new_low, new_high, (new_low != exact.low or new_high != exact.high)


def mean_interval(values: list[float], t: float | None) -> tuple[float | None, float | None]:
    """Mean ± t · sd / √B of the batches' values; (None, None) when t is None (under 2 batches)."""
    if t is None or len(values) < 2:
        return None, None
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = t * sd / math.sqrt(len(values))
    return mean - half, mean + half


def wider_interval(
    independent: tuple[float | None, float | None], batch: tuple[float | None, float | None]
) -> tuple[float | None, float | None, bool]:
    """Each end the wider of the two (None, unbounded, wins only where the independent end is
    open: a batch interval that could not be formed leaves the independent one); and whether the
    batch interval widened either end."""
    low_i, high_i = independent
    low_b, high_b = batch
    if low_b is None or high_b is None:
        return low_i, high_i, False
    low = None if low_i is None else min(low_i, low_b)
    high = None if high_i is None else max(high_i, high_b)
    return low, high, (low != low_i or high != high_i)
