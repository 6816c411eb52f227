"""Repeats until every claimed figure is resolved (`workload.replay.until: resolved`, issue 31 item 3):
the interval across independent runs of the same sample, and a sequential-testing correction so that
looking after every run and stopping when decisive does not inflate wrong verdicts.

The interval at look k (k runs done, k ≥ 2). The runs are independent replays of one plan, so their
values X_1 … X_k are independent draws of one run's figure (within-run noise plus the run-to-run
effect), and mean ± t(k − 1, 1 − α_k/2)·sd/√k is a valid interval for its mean with no within-run
interval trusted. Unlike a repeated replay's union of runs (`repeated_figures.py`), it narrows as
runs are added: that is what lets more runs resolve a verdict.

The correction: alpha spending (Lan & DeMets 1983). A spending function α(τ) rises from 0 to α
over the information fraction τ = k / K (K = `max_runs`); look k may spend α_k = α(τ_k) − α(τ_{k−1})
(look 2 also spends the first run's α(1/K), as no interval exists after one run). A wrong verdict
at some look needs the truth outside that look's interval, so by the union bound
P(any wrong verdict) ≤ Σ α_k = α(1) = α whatever the looks' correlation: conservative (the exact
group-sequential boundaries, by recursive integration, are a little narrower), with no assumption
on how the runs' statistics move together. Two spending functions:

* O'Brien–Fleming type (the default): α(τ) = 2 − 2Φ(z_{1−α/2} / √τ). It spends almost nothing early
  (a resolution after 2 of 10 runs needs overwhelming evidence) and most at the last look, so a run
  that goes the distance is judged nearly at the spec's own confidence.
* Pocock type: α(τ) = α·ln(1 + (e − 1)·τ), nearly equal shares: earlier stops, a wider final look.

A figure's verdict is taken at the first look where it is decisive, with that look's interval, and
then no longer tested; the replay stops once every claimed figure repeated over the runs is
resolved, or at `max_runs`, or once `max_minutes` of replay have passed (fewer looks than planned:
the unspent α only makes it more conservative).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from scipy.stats import norm
from scipy.stats import t as student_t

from pipeline.analysis.statistics.stats import INCONCLUSIVE, verdict

OBRIEN_FLEMING, POCOCK = "obrien_fleming", "pocock"
SPENDING = (OBRIEN_FLEMING, POCOCK)
FIRST_LOOK = 2  # a spread needs two runs


def spent(fraction: float, alpha: float, spending: str = OBRIEN_FLEMING) -> float:
    """α(τ): the error probability spent by information fraction τ ∈ [0, 1] (the module's two forms)."""
    if fraction <= 0:
        return 0.0
    fraction = min(fraction, 1.0)
    if spending == POCOCK:
        return alpha * math.log(1.0 + (math.e - 1.0) * fraction)
    if spending == OBRIEN_FLEMING:
        return float(2.0 - 2.0 * norm.cdf(norm.ppf(1.0 - alpha / 2.0) / math.sqrt(fraction)))
    raise ValueError(f"unknown spending function {spending!r}; known: {', '.join(SPENDING)}")


def look_alphas(max_runs: int, alpha: float, spending: str = OBRIEN_FLEMING) -> dict[int, float]:
    """The two-sided α each look k = 2 … max_runs may spend (summing to α: the module's rule)."""
    if max_runs < FIRST_LOOK:
        raise ValueError(f"until resolved needs at least {FIRST_LOOK} runs")
    return {
        k: spent(k / max_runs, alpha, spending)
        - (0.0 if k == FIRST_LOOK else spent((k - 1) / max_runs, alpha, spending))
        for k in range(FIRST_LOOK, max_runs + 1)
    }


def across_runs(values: list[float], alpha: float, fraction: bool = False) -> tuple[float, float, float]:
    """(mean, low, high): the t-interval over the runs' values at two-sided α, kept ≥ 0 (≤ 1 for a
    fraction)."""
    k = len(values)
    mean = statistics.fmean(values)
    half = float(student_t.ppf(1.0 - alpha / 2.0, k - 1)) * statistics.stdev(values) / math.sqrt(k)
    low, high = max(mean - half, 0.0), mean + half
    return mean, low, min(high, 1.0) if fraction else high


Interval = tuple[float | None, float | None]


@dataclass(frozen=True)
class Look:
    """One claimed figure at the look it was settled at (or the last look): runs, value, interval,
    the α that look spent, and the verdict."""

    runs: int
    measured: float
    ci_low: float | None
    ci_high: float | None
    alpha: float
    verdict: str | None

    @property
    def resolved(self) -> bool:
        return self.verdict not in (None, INCONCLUSIVE)


def look(
    values: list[float],
    alpha: float,
    claimed: float | None,
    larger_is_better: bool,
    tolerance: float = 0.0,
    fraction: bool = False,
    own: list[Interval] | None = None,
) -> Look:
    """A figure judged over the runs so far at a look's α (`stats.verdict`, with its tolerance).
    Runs all equal (a figure with few possible values: an ITL median on a few step durations, an
    accuracy of k/200) have no spread to estimate: the interval is then the hull of the runs' own
    intervals (`own`), as a fixed number of repeats has it, and with none given the look judges nothing."""
    if len(set(values)) == 1:
        mean = values[0]
        if not own:
            return Look(len(values), mean, None, None, alpha, INCONCLUSIVE)
        low = None if any(end[0] is None for end in own) else min(end[0] for end in own)  # type: ignore[type-var]
        high = None if any(end[1] is None for end in own) else max(end[1] for end in own)  # type: ignore[type-var]
        return Look(len(values), mean, low, high, alpha, verdict(claimed, low, high, larger_is_better, tolerance))
    mean, low_, high_ = across_runs(values, alpha, fraction)
    return Look(len(values), mean, low_, high_, alpha, verdict(claimed, low_, high_, larger_is_better, tolerance))


def settle(
    run_values: dict[str, list[float]],
    claims: dict[str, tuple[float, bool, float, bool]],
    alphas: dict[int, float],
    own: dict[str, list[Interval]] | None = None,
) -> dict[str, Look]:
    """Each claimed figure over the runs present (`run_values`: name → each run's value in order;
    `claims`: name → (claimed, larger_is_better, tolerance, fraction); `own`: each run's own
    interval, for runs all equal), judged at every look in turn and kept at its first decisive
    look, else at the last look: what the stopping rule reports."""
    settled: dict[str, Look] = {}
    for name, (claimed, larger_is_better, tolerance, fraction) in claims.items():
        values, intervals = run_values[name], (own or {}).get(name)
        for k in range(FIRST_LOOK, len(values) + 1):
            runs_own = intervals[:k] if intervals else None
            settled[name] = look(values[:k], alphas[k], claimed, larger_is_better, tolerance, fraction, runs_own)
            if settled[name].resolved:
                break
    return settled


def should_stop(settled: dict[str, Look], runs: int, max_runs: int, minutes: float, max_minutes: float) -> bool:
    """Stop when every claimed figure is resolved, or at a bound (runs or minutes)."""
    if runs >= max_runs or minutes >= max_minutes:
        return True
    return runs >= FIRST_LOOK and bool(settled) and all(item.resolved for item in settled.values())
