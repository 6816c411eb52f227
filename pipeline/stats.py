"""Small statistics: confidence levels, Wilson intervals, verdicts from intervals."""

from __future__ import annotations

import math

CONFIDENCE = 0.95
Z_95 = 1.959963984540054  # two-sided 95 % normal quantile

HOLDS, NOT_REPRODUCED, INCONCLUSIVE = "holds", "not reproduced", "inconclusive"


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
    claimed: float | None, ci_low: float | None, ci_high: float | None, larger_is_better: bool
) -> str | None:
    """holds / not reproduced / inconclusive for one claimed figure, from its interval.

    An open side of the interval (None: the run was too short to bound it) can never support a
    verdict on that side, so a short run comes out inconclusive.
    """
    if claimed is None:
        return None
    if larger_is_better:
        if ci_low is not None and ci_low >= claimed:
            return HOLDS
        if ci_high is not None and ci_high < claimed:
            return NOT_REPRODUCED
    else:
        if ci_high is not None and ci_high <= claimed:
            return HOLDS
        if ci_low is not None and ci_low > claimed:
            return NOT_REPRODUCED
    return INCONCLUSIVE
