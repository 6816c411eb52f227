"""Small statistics: confidence levels, order-statistic ranks, Wilson intervals, verdicts.

Percentile intervals are distribution-free: the k-th smallest of n samples bounds the
q-quantile with a probability given exactly by the binomial distribution (no normal
approximation). A claimed percentile is supported only when the run is long enough, which is
MLPerf LoadGen's early-stopping rule (`early_stopping_min_queries`); the two views agree
exactly (see `tests/unit/test_stats.py`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

CONFIDENCE = 0.95
Z_95 = 1.959963984540054  # two-sided 95 % normal quantile

HOLDS, NOT_REPRODUCED, INCONCLUSIVE = "holds", "not reproduced", "inconclusive"
HOLDS_WITHIN_TOLERANCE = "holds within tolerance"
VERDICTS = (HOLDS, HOLDS_WITHIN_TOLERANCE, NOT_REPRODUCED, INCONCLUSIVE)  # the words, best first
REPRODUCED = (HOLDS, HOLDS_WITHIN_TOLERANCE)  # the claim reproduces (within its tolerance)


@dataclass(frozen=True)
class OrderStatisticRanks:
    """1-based ranks into the sorted sample: point estimate and interval ends (None: unbounded)."""

    point: int
    low: int | None
    high: int | None


def nearest_rank(n: int, q: float) -> int:
    """The nearest-rank percentile: the ceil(q·n)-th smallest value (at least the first)."""
    return max(1, math.ceil(q * n - 1e-9))


# cached: a function of its three numbers alone, asked again for each metric of the same n and for
# each sweep level and arm (5,320 times in one `loadproof verify` of the demo pack, ~1 s of scipy)
@functools.lru_cache(maxsize=4096)
def order_statistic_ranks(n: int, q: float, confidence: float = CONFIDENCE) -> OrderStatisticRanks:
    """Ranks of the order statistics that bracket the q-quantile with `confidence` (two-sided,
    equal tails): P(X_(low) ≤ ξ_q) ≥ 1 − α/2 and P(X_(high) ≥ ξ_q) ≥ 1 − α/2, exact for any
    continuous distribution. An end is None when no order statistic of n samples reaches that
    confidence: the run is too short to bound the quantile on that side.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    tail = (1.0 - confidence) / 2.0
    # high: the smallest k with P(Binom(n, q) ≤ k − 1) ≥ 1 − tail
    high = int(binom.ppf(1.0 - tail, n, q)) + 1
    # low: the largest j with P(Binom(n, q) ≤ j − 1) ≤ tail
    below = int(binom.ppf(tail, n, q))
    if binom.cdf(below, n, q) > tail:
        below -= 1
    low = below + 1
    return OrderStatisticRanks(
        point=nearest_rank(n, q),
        low=low if low >= 1 else None,
        high=high if high <= n else None,
    )


def one_sided_confidence(confidence: float = CONFIDENCE) -> float:
    """The confidence of each end of a two-sided equal-tailed interval (0.95 → 0.975)."""
    return 1.0 - (1.0 - confidence) / 2.0


def early_stopping_min_queries(q: float, overlatency: int, confidence: float = 0.99, tolerance: float = 0.0) -> int:
    """MLPerf LoadGen's early-stopping rule (loadgen/early_stopping.cc, `MinPassingQueriesFinder`).

    The smallest number h of queries at or under the latency bound such that, with
    `overlatency` (t) queries over it, a system whose true q-quantile were exactly at the bound
    would show t or fewer overlatency queries in h + t with probability ≤ 1 − confidence:
    P(Binom(h + t, 1 − q + tolerance) ≤ t) ≤ 1 − confidence. A run of n queries supports the
    claim "q-quantile ≤ bound" only when n ≥ h + t. LoadGen uses confidence 0.99, tolerance 0.
    """
    p_under = q - tolerance
    if not 0 < p_under < 1:
        raise ValueError("q − tolerance must lie in (0, 1)")

    def odds(h: int) -> float:
        return float(binom.cdf(overlatency, h + overlatency, 1.0 - p_under))

    low, high = 0, max(1, math.ceil(math.log(1 - confidence) / math.log(p_under)))
    while odds(high) > 1 - confidence:
        low, high = high, high * 2
    while low < high:  # the smallest h in [low, high] with odds(h) ≤ 1 − confidence
        middle = (low + high) // 2
        if odds(middle) <= 1 - confidence:
            high = middle
        else:
            low = middle + 1
    return low


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float | None, float | None]:
    """Wilson score interval of a proportion; (None, None) when n is 0."""
    if n == 0:
        return None, None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def verdict(
    claimed: float | None,
    ci_low: float | None,
    ci_high: float | None,
    larger_is_better: bool,
    tolerance: float = 0.0,
) -> str | None:
    """The verdict on one claimed figure C from its interval, with tolerance t (a fraction of C).

    Larger is better: *holds* when the whole interval is at or above C; *holds within tolerance*
    when the whole interval is at or above C·(1 − t) but not all above C; *not reproduced* when
    the whole interval is below C·(1 − t); *inconclusive* otherwise. Smaller is better, mirrored:
    at or below C, at or below C·(1 + t), wholly above C·(1 + t). With t = 0 there is no "within
    tolerance" (holds, not reproduced, inconclusive as before tolerances). An open side of the
    interval (None: the run was too short to bound it) can never support a verdict on that side,
    so a short run comes out inconclusive.
    """
    if claimed is None:
        return None
    if larger_is_better:
        bound = claimed * (1.0 - tolerance)
        if ci_low is not None and ci_low >= claimed:
            return HOLDS
        if ci_low is not None and ci_low >= bound:
            return HOLDS_WITHIN_TOLERANCE
        if ci_high is not None and ci_high < bound:
            return NOT_REPRODUCED
    else:
        bound = claimed * (1.0 + tolerance)
        if ci_high is not None and ci_high <= claimed:
            return HOLDS
        if ci_high is not None and ci_high <= bound:
            return HOLDS_WITHIN_TOLERANCE
        if ci_low is not None and ci_low > bound:
            return NOT_REPRODUCED
    return INCONCLUSIVE


# the decision rules (`decision_rule`): what decided a verdict
INTERVAL_RULE = "interval vs the claim with its tolerance"
BEYOND_AFTER_WARMUP = (
    "no steady window: the latency's whole interval over every request after warm-up lies beyond the claim with "
    "its tolerance (a transient cannot lower a latency)"
)
BELOW_AT_MOST_FAVOURABLE = (
    "no steady window: the rate's interval lies below the claim with its tolerance even at the most favourable "
    "window the steady-state test could have kept (half the window or more: at most twice its rate)"
)
ERRORS_AFTER_WARMUP = (
    "no steady window: the error rate's whole interval over every request after warm-up lies above the claim with "
    "its tolerance (a warm-up transient or a queue still filling only adds errors)"
)
UNSTEADY_UNDECIDED = "no steady window: the interval over the window does not rule the transient out"
# a window the steady-state test keeps holds at least half the configured one
# (pipeline/analysis/statistics/steady_state.py trims a leading ramp only when its change point lies in the first half),
# so a rate over it is at most twice the rate over the whole window: its amounts are never negative
MOST_FAVOURABLE_RATE_FACTOR = 2.0


# Instrument error: the client's timing error, measured against the wire where it can be and from
# the loop's receipt lag everywhere; carried beside each latency figure. Where its p99 exceeds this
# share of the claim's tolerance (C·t) a latency verdict cannot be holds
INSTRUMENT_ERROR_SHARE = 0.25
INSTRUMENT_ERROR_RULE = (
    "instrument error: the client's timing error (p99) exceeds a quarter of the claim's tolerance, so the client "
    "cannot tell a hold from a miss; fewer streams a process (workload.replay.shards: auto), a smaller rate or a "
    "bigger machine fixes it"
)
INSTRUMENT_MISS_RULE = (
    "instrument error: the interval's low end less the client's timing error (p99) no longer lies beyond the claim "
    "with its tolerance, so the client's own lag could make the miss; fewer streams a process "
    "(workload.replay.shards: auto), a smaller rate or a bigger machine fixes it"
)


def instrument_verdict(
    word: str | None,
    claimed: float | None,
    tolerance: float,
    instrument_error_ms: float | None,
    kind: str,
    ci_low: float | None = None,
) -> tuple[str | None, str | None]:
    """(verdict, decision rule) of a latency figure (`kind` "latency percentile", in ms) given the
    instrument error's p99 in ms: a *holds* or *holds within tolerance* becomes *inconclusive*
    (INSTRUMENT_ERROR_RULE) when that error exceeds INSTRUMENT_ERROR_SHARE · C · t — an instrument
    whose error is more than a quarter of the band it judges cannot tell a hold from a miss (the
    4:1 test-uncertainty ratio of calibration practice). A late receipt stamp only lengthens a
    latency, so a *not reproduced* stands unless its interval's low end, less the error, no longer
    clears C·(1 + t) (`ci_low`: the miss is within what the client's own lag adds, INSTRUMENT_MISS_RULE).
    (word, None) where the rule does not apply."""
    if claimed is None or instrument_error_ms is None or kind != "latency percentile":
        return word, None
    if word in (HOLDS, HOLDS_WITHIN_TOLERANCE) and instrument_error_ms > INSTRUMENT_ERROR_SHARE * claimed * tolerance:
        return INCONCLUSIVE, INSTRUMENT_ERROR_RULE
    if word == NOT_REPRODUCED and ci_low is not None and ci_low - instrument_error_ms <= claimed * (1 + tolerance):
        return INCONCLUSIVE, INSTRUMENT_MISS_RULE
    return word, None


def steady_verdict(word: str | None, no_steady_window: str | None) -> str | None:
    """A verdict over a window with no steady state is inconclusive, whatever the interval says
    (a repeated replay's union of runs: `unsteady_verdict` decides a single window's figure)."""
    return INCONCLUSIVE if word is not None and no_steady_window is not None else word


def unsteady_verdict(
    word: str | None,
    claimed: float | None,
    ci_low: float | None,
    ci_high: float | None,
    kind: str,
    tolerance: float = 0.0,
    larger_is_better: bool = True,
) -> tuple[str | None, str | None]:
    """(verdict, decision rule) of a figure read over a window the steady-state tests rejected:
    decided only in the direction the transient cannot explain. A latency percentile (`kind`
    "latency percentile", smaller is better) whose interval over every request after warm-up lies
    wholly beyond C·(1 + t) is *not reproduced*: a warm-up transient or a queue still filling only
    lengthens latencies, so the steady latency is no better, and an overloaded closed loop (its queue
    full throughout) is itself the answer for that concurrency. A rate (`kind` "rate", larger is
    better) is *not reproduced* when even twice its interval's upper end (`MOST_FAVOURABLE_RATE_FACTOR`)
    lies below C·(1 − t). A proportion where smaller is better (the error rate) is *not reproduced*
    on the latency's rule: time-outs and 429s while a queue fills only add errors. Everything else
    stays inconclusive."""
    if word is None:
        return None, None
    if claimed is not None and kind == "latency percentile" and word == NOT_REPRODUCED:
        return NOT_REPRODUCED, BEYOND_AFTER_WARMUP
    if claimed is not None and kind == "proportion" and not larger_is_better and word == NOT_REPRODUCED:
        return NOT_REPRODUCED, ERRORS_AFTER_WARMUP
    favourable = None if ci_high is None else ci_high * MOST_FAVOURABLE_RATE_FACTOR
    if claimed is not None and kind == "rate" and favourable is not None and favourable < claimed * (1.0 - tolerance):
        return NOT_REPRODUCED, BELOW_AT_MOST_FAVOURABLE
    return INCONCLUSIVE, UNSTEADY_UNDECIDED


def peak_concurrency(sent_ns: np.ndarray, end_ns: np.ndarray) -> int:
    """The most requests in flight at any instant: at each send, sends so far minus ends so far
    (an end at the very instant of a send is counted first: the two never overlapped). Exact,
    O(n log n): two sorts and a binary search, no per-event window. Sends tied at one instant
    need no search of their own: the last of them counts them all, and its count is the largest
    of theirs, so the i-th sorted send's count is taken as i + 1. Integers sort to the same array
    whichever the algorithm: numpy's default (quicksort) is about twice as fast as a stable one."""
    if len(sent_ns) == 0:
        return 0
    sends, ends = np.sort(sent_ns), np.sort(end_ns)
    started = np.arange(1, len(sends) + 1)  # sends up to each send in sorted order
    ended = np.searchsorted(ends, sends, side="right")  # ends at or before each send
    return int((started - ended).max())


def effective_samples(n: int, design_effect: float | None) -> float:
    """n over the design effect (the batch-means variance over the independent one, where the
    run's values move together): the independent samples the run is worth. A design effect below
    1 never counts for more than n, as the interval never narrows below the exact one."""
    return n / max(design_effect or 1.0, 1.0)


def early_stopping_note(
    q: float, n: int, confidence: float, design_effect: float | None = None, closed: bool = True
) -> dict:
    """How many samples a claim on this percentile needs to hold, even with none over it, and
    whether this run is long enough: its effective sample size (n over the design effect the
    interval used) reaches that, and its interval is closed. Stopping and the interval then agree:
    requests that move together count as fewer, and a run whose interval is still open on a side
    was too short to bound it, whatever its count."""
    one_sided = one_sided_confidence(confidence)
    needed = early_stopping_min_queries(q, 0, one_sided)
    effective = effective_samples(n, design_effect)
    return {
        "confidence": one_sided,
        "min_samples_to_hold": needed,
        "effective_samples": effective,
        "long_enough": closed and effective >= needed,
    }
