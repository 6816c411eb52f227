"""A figure of a replay repeated until resolved (`workload.replay.until`): its value, interval and
verdict over the runs as the sequential rule settles them (pipeline/analysis/statistics/until_resolved.py), in
place of a fixed number of repeats' union (`repeated_figures.combined`, whose run list, spread and
early-stopping record it keeps)."""

from __future__ import annotations

from pipeline.analysis.declare import metrics
from pipeline.analysis.statistics.until_resolved import across_runs, look_alphas, settle
from pipeline.spec import Spec


def sequential(combined: dict, runs: list[dict], spec: Spec) -> dict:
    """`combined` (the figure over its runs) with the until-resolved interval: a claimed, judged
    figure at its first decisive look (else the last), each look at the α it spent; any other at the
    t-interval over every run at the spec's confidence (it stops nothing, so spends nothing)."""
    until = spec.workload.replay.until
    assert until is not None
    values = [run["measured"] for run in runs]
    if len(runs) < 2 or any(value is None for value in values):
        return combined
    own = [(run.get("ci_low"), run.get("ci_high")) for run in runs]  # for runs all equal: their hull
    unit, larger_is_better = metrics.describe(combined["metric"])
    fraction = unit == "fraction"
    alpha = 1.0 - spec.analysis.confidence
    judged = combined.get("claimed") is not None and not combined.get("not_judged")
    spending = f"{until.spending.replace('_', '–').title().replace('Obrien', 'O’Brien')}-type alpha spending"
    if judged:
        alphas = look_alphas(until.max_runs, alpha, until.spending)
        claim = (combined["claimed"], larger_is_better, combined.get("tolerance") or 0.0, fraction)
        settled = settle({"figure": values}, {"figure": claim}, alphas, {"figure": own})["figure"]
        measured, low, high, verdict = settled.measured, settled.ci_low, settled.ci_high, settled.verdict
        how = (
            f"the hull of the first {settled.runs} runs' own intervals (all the same value: no spread to estimate)"
            if len(set(values[: settled.runs])) == 1
            else f"the t-interval over the first {settled.runs} of {len(runs)} runs at the α its look spent"
        )
        method = f"until resolved: {how} ({settled.alpha:.3g}; {spending} over {until.max_runs} looks)"
    elif len(set(values)) == 1:
        return combined  # no spread to estimate: the runs' union, as a fixed number of repeats
    else:
        measured, low, high = across_runs(values, alpha, fraction)
        verdict = combined.get("verdict")
        method = f"until resolved: the t-interval over the {len(runs)} runs at the spec's confidence"
    out = {**combined, "measured": measured, "ci_low": low, "ci_high": high, "verdict": verdict}
    out["interval_method"] = method
    out["repeats"] = {**combined["repeats"], "interval_method": method}
    if "early_stopping" in out:
        out["early_stopping"] = {**out["early_stopping"], "long_enough": low is not None and high is not None}
    return out
