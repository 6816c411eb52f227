"""What would settle an inconclusive claimed figure (issue 31, item 3): how many more requests, and
minutes of the same load, would make its verdict decisive, at its measured design effect and its
distance to the claim's bound. Made here, once, for `data/figures.parquet` (`requests_to_resolve`,
`minutes_to_resolve`, `to_resolve`); the pack only reads it and `loadproof verify` re-computes it.

The rule. A figure is inconclusive because its interval straddles the claim's bound B (the claim C
moved by its tolerance t: C·(1 − t) where larger is better, C·(1 + t) where smaller is better:
`stats.verdict`). The side of the interval facing B, of half-width h, must shrink below the distance
d = |measured − B|. Every interval the analysis makes (order statistics, batch means, Wilson) narrows
as 1/√n_eff, with n_eff = n / design effect the effective samples (`figures.effective_samples`); at
the measured design effect n_eff grows with n, so the run must grow by the factor (h / d)²: in all
n·(h/d)² samples, n·((h/d)² − 1) more (rounded up, so that the half-width lands strictly inside).
That assumes the measured value stands: if the truth lies elsewhere the run settles sooner or later.

* The side facing B open (a percentile whose run is too short to bound that side): the half-width
  is unknown. The estimate is then the larger of the mirrored side's factor and the samples that
  side first needs to exist at all: the exact interval's (the q-quantile's upper end needs
  q^n ≤ α/2, its lower (1 − q)^n ≤ α/2) times the design effect, and, for a batch-means interval,
  Woodruff's (`dependence.woodruff_ranks`: q + t·se < 1 for the upper end, q − t·se > 0 for the
  lower, with se² = DE·q(1 − q)/n: n > t²·DE·q/(1 − q), resp. t²·DE·(1 − q)/q, t Student's on
  the batches − 1 degrees of freedom). That is a lower bound, said as "at least".
* The measured value at B (d = 0): no length resolves it; the pack says so.
* Minutes: the more requests at the load that measured the figure. At the production load the
  steady window grows by the same factor (`window_s` of `throughput`: requests sent in the window /
  window_s is the rate). At the vendor's conditions, the arm's measured requests/s. Accuracy (a
  labelled slice) and a capacity figure have no such rate: requests only (labelled items for accuracy).
* A repeated replay's figure: every run grows by the factor (the verdict's interval holds each run's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline.analysis.declare import metrics
from pipeline.analysis.declare.catalogue import CAPACITY_AT_SLA, PRODUCTION_LOAD, VENDOR_CONDITIONS
from pipeline.analysis.judge.instrument_error import decided_by_instrument, resolution_words
from pipeline.analysis.statistics.dependence import BATCH_MEANS, t_quantile
from pipeline.analysis.statistics.stats import INCONCLUSIVE, one_sided_confidence
from pipeline.plan.arms import VENDOR_CONDITIONS as VENDOR_CONDITIONS_ARM

AT_BOUND = 1e-12  # a distance this small relative to the bound is none
CANNOT_BY_LENGTH = "cannot be resolved by length alone"
UNTIL_RESOLVED = "until resolved"  # a figure of `workload.replay.until` names it in its interval_method
OPEN_THOUGH_LONG = (
    "its interval is open on the side facing the claim although the run has the samples to bound it "
    "(e.g. too few requests in a send-time batch): no rate of narrowing to scale from"
)


# the setting that makes the replay behind a figure's basis longer (a window too short to be steady)
LENGTH_SETTINGS = {
    PRODUCTION_LOAD: "`workload.sample.window_s`",
    VENDOR_CONDITIONS: "`workload.replay.arms.waves` (and `max_duration_s`): a closed loop's first wave is "
    "warm-up, so several waves of the claim's concurrency beyond it",
    CAPACITY_AT_SLA: "`workload.replay.sweep.duration_s_per_level` and `requests_per_level`",
}


@dataclass(frozen=True)
class Growth:
    """How much longer a run must be: `factor` × its samples (None: no length settles it), and
    whether that is a lower bound (the side facing the bound was open)."""

    factor: float | None
    at_least: bool = False
    why: str = ""


def claim_bound(claimed: float, larger_is_better: bool, tolerance: float = 0.0) -> float:
    """The value the interval must clear on one side: C·(1 − t) where larger is better, C·(1 + t)
    where smaller is (`stats.verdict`)."""
    return claimed * (1.0 - tolerance) if larger_is_better else claimed * (1.0 + tolerance)


def samples_to_close(q: float, upper: bool, confidence: float) -> int:
    """The fewest independent samples whose order statistics bound the q-quantile on one side at
    `confidence` (two-sided, equal tails): the upper end exists once q^n ≤ α/2, the lower once
    (1 − q)^n ≤ α/2 (`stats.order_statistic_ranks`: the largest or smallest sample is the end)."""
    tail = 1.0 - one_sided_confidence(confidence)
    base = q if upper else 1.0 - q
    return max(1, math.ceil(math.log(tail) / math.log(base) - 1e-9))


def woodruff_samples_to_close(q: float, upper: bool, design_effect: float, t: float) -> float:
    """The samples beyond which a batch-means (Woodruff) interval of the q-quantile has that end:
    q ± t·se inside (0, 1), se² = design_effect·q(1 − q)/n."""
    return t * t * design_effect * (q / (1.0 - q) if upper else (1.0 - q) / q)


def growth(
    measured: float | None,
    ci_low: float | None,
    ci_high: float | None,
    bound: float,
    n: int,
    design_effect: float | None = None,
    percentile: float | None = None,
    confidence: float = 0.95,
    batch_t: float | None = None,
) -> Growth:
    """By what factor the run must grow for the interval to clear `bound` (the module's rule);
    `batch_t`: Student's t of the figure's batch-means interval (None: an independent one)."""
    if measured is None or n < 1:
        return Growth(None, why="no value was measured")
    distance = measured - bound
    if abs(distance) <= AT_BOUND * max(abs(bound), 1.0):
        return Growth(None, why="the measured value sits at the claim's bound")
    facing, mirror = (ci_low, ci_high) if distance > 0 else (ci_high, ci_low)
    if facing is not None:
        return Growth((abs(measured - facing) / abs(distance)) ** 2)
    mirrored = (abs(mirror - measured) / abs(distance)) ** 2 if mirror is not None else None
    closing = None
    if percentile is not None:
        needed = samples_to_close(percentile, upper=distance < 0, confidence=confidence) * max(
            design_effect or 1.0, 1.0
        )
        if batch_t is not None:
            needed = max(needed, woodruff_samples_to_close(percentile, distance < 0, design_effect or 1.0, batch_t))
        closing = needed / n
    known = [factor for factor in (mirrored, closing) if factor is not None]
    if not known:
        return Growth(None, why="its interval is open on both sides: too few samples to scale from")
    if max(known) <= 1.0:  # the run already has what would bound that side: its method lacks something else
        return Growth(None, why=OPEN_THOUGH_LONG)
    return Growth(max(known), at_least=True)


def more_samples(n: int, factor: float) -> int:
    """The samples beyond n that make n·factor, rounded up so the half-width lands strictly inside
    the distance (none when the run is already long enough: a factor at or below 1)."""
    return max(0, math.floor(n * factor + 1e-9) + 1 - n) if factor > 1.0 else 0


def to_resolve(item: dict, confidence: float, load: dict | None, batches: int | None = None) -> dict:
    """`requests_to_resolve`, `minutes_to_resolve` and `to_resolve` (the words) of one inconclusive
    claimed figure; `load` is what the load that measured it ran at: `requests` and `window_s` of the
    production load's steady window, or `requests_per_s` of the vendor's conditions (None: no rate);
    `batches`: analysis.interval_batches, for a batch-means interval's own closing point."""
    if item.get("setting_to_judge"):
        return {"to_resolve": f"not by length: no run judges it; set `{item['setting_to_judge']}`"}
    if decided_by_instrument(item):
        return {"to_resolve": resolution_words(item)}
    if item.get("measured") is None:
        return {"to_resolve": f"{CANNOT_BY_LENGTH}: {item.get('reason') or 'no value was measured'}"}
    if (item.get("reason") or "").startswith("the capacity bracket is not closed"):
        return {"to_resolve": f"{CANNOT_BY_LENGTH}: {item['reason']}; widen `workload.replay.sweep`"}
    _, larger_is_better = metrics.describe(item["metric"])
    bound = claim_bound(item["claimed"], larger_is_better, item.get("tolerance") or 0.0)
    runs = len((item.get("repeats") or {}).get("runs") or []) or 1
    n_per_run = item["n"] / runs
    design = item.get("design_effect")
    if runs > 1:  # each run's own: the largest, as the verdict's interval holds each run's
        design = max((run.get("design_effect") or 1.0) for run in item["repeats"]["runs"])
    found = growth(
        item["measured"],
        item.get("ci_low"),
        item.get("ci_high"),
        bound,
        max(1, round(n_per_run)),
        design,
        metrics.percentile_of(item["metric"]),
        confidence,
        t_quantile(batches, confidence) if batches and BATCH_MEANS in (item.get("interval_method") or "") else None,
    )
    if found.factor is None:
        return _unsteady(item, {"to_resolve": f"{CANNOT_BY_LENGTH}: {found.why}"})
    per_run: float = (load or {}).get("requests") or n_per_run
    if UNTIL_RESOLVED in (item.get("interval_method") or ""):
        return _more_runs(item, found, runs, per_run, load)
    requests = more_samples(round(per_run), found.factor) * runs
    minutes = None
    if load and load.get("window_s"):
        minutes = (found.factor - 1.0) * load["window_s"] * runs / 60.0 if requests else 0.0
    elif load and load.get("requests_per_s"):
        minutes = requests / load["requests_per_s"] / 60.0
    words = _words(item, bound, found, requests, minutes, runs, design)
    return _unsteady(item, {"requests_to_resolve": requests, "minutes_to_resolve": minutes, "to_resolve": words})


def _unsteady(item: dict, found: dict) -> dict:
    """A figure read over a window the steady-state tests rejected needs a steady window first:
    a replay long enough to hold one; then what its interval needs, if anything."""
    steady = item.get("no_steady_window")
    if steady is None:
        return found
    setting = LENGTH_SETTINGS.get(item.get("basis") or PRODUCTION_LOAD, LENGTH_SETTINGS[PRODUCTION_LOAD])
    first = f"{steady}: a replay long enough to hold a steady window ({setting})"
    if found.get("requests_to_resolve") == 0:
        return {**found, "to_resolve": f"{first} would resolve it (its interval already clears the claim)"}
    return {**found, "to_resolve": f"{first}, then {found['to_resolve']}"}


def _more_runs(item: dict, found: Growth, runs: int, per_run: float, load: dict | None) -> dict:
    """A replay repeated until resolved that stopped undecided: its interval across runs narrows as
    1/√runs, so `runs`·factor runs in all (the t-quantile's fall with more runs only helps)."""
    more = more_samples(runs, found.factor or 1.0)  # a factor: `to_resolve` returned before without one
    requests = round(more * per_run)
    minutes = more * load["window_s"] / 60.0 if load and load.get("window_s") else None
    minutes_words = "" if minutes is None else f", ≈ {_duration(minutes)} of this load"
    return {
        "requests_to_resolve": requests,
        "minutes_to_resolve": minutes,
        "to_resolve": f"≈ {more} more runs ({_number(requests)} requests{minutes_words}) would resolve it: "
        f"its interval across the {runs} runs narrows as 1/√runs (raise workload.replay.until.max_runs)",
    }


def _words(
    item: dict, bound: float, found: Growth, requests: int, minutes: float | None, runs: int, design: float | None
) -> str:
    unit = "labelled items" if item["metric"] == "accuracy" else "requests"
    minutes_words = "" if minutes is None else f" (≈ {_duration(minutes)} of this load)"
    at_least = "at least " if found.at_least else "≈ "
    each = f" over its {runs} runs" if runs > 1 else ""
    return (
        f"{at_least}{_number(requests)} more {unit}{minutes_words}{each} would resolve it: the interval must clear "
        f"{_number(bound)} (the claim with its tolerance), {_number(abs(item['measured'] - bound))} from the "
        f"measured value; the run {_number(found.factor or 1.0)} × as long"
        + (f" at the measured design effect {_number(design)}" if design is not None else "")
        + (" (its interval is still open on the side facing the claim)" if found.at_least else "")
    )


def _number(value: float) -> str:
    """Whole numbers with separators from 1,000 up, four significant digits below, never an
    exponent (0.00001234, not 1.234e-05)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    decimals = max(0, 3 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{value:.0f}"


def _duration(minutes: float) -> str:
    """An estimate of time to two significant digits, never an exponent: minutes from 0.1 min on
    (whole from 10), seconds below (whole from 10 s); under 0.1 s says so."""
    if minutes >= 10:
        return f"{minutes:,.0f} min"
    if minutes >= 0.1:
        return f"{minutes:.2g} min"
    seconds = minutes * 60
    if seconds >= 10:
        return f"{seconds:.0f} s"
    return f"{seconds:.2g} s" if seconds >= 0.1 else "under 0.1 s"


def with_resolution(
    figures: list[dict],
    confidence: float,
    throughput: list[dict],
    arm_rows: list[dict] | None = None,
    batches: int | None = None,
) -> list[dict]:
    """Every figure, each inconclusive claimed one with what would resolve it (`to_resolve`)."""
    loads: dict[tuple[str, str], dict] = {}
    for row in throughput:
        loads[(row["candidate"], PRODUCTION_LOAD)] = {
            "requests": row.get("requests_in_window"),
            "window_s": row.get("window_s"),
        }
    for row in arm_rows or []:
        if row["metric"] == "requests_per_s" and row.get("arm") == VENDOR_CONDITIONS_ARM and row.get("measured"):
            loads[(row["candidate"], VENDOR_CONDITIONS)] = {"requests_per_s": row["measured"]}
    out = []
    for item in figures:
        if item.get("verdict") != INCONCLUSIVE or item.get("claimed") is None:
            out.append(item)
            continue
        basis = item.get("basis") or PRODUCTION_LOAD
        load = (
            None if item["metric"] == "accuracy" or basis == CAPACITY_AT_SLA else loads.get((item["candidate"], basis))
        )
        out.append({**item, **to_resolve(item, confidence, load, batches)})
    return out
