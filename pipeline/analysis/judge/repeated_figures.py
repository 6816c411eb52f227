"""Headline figures of a repeated production replay (`workload.replay.repeats`): each run's own
figure, the spread between runs, and a verdict interval that takes that spread in.

Each run is analysed on its own with the very same queries (`pipeline/analysis/tabulate/repeats.py`), so
run k's figure is exactly what a replay done once would have reported. The figure then says (in
`data/figures.parquet` and so in the pack), per figure:

* `measured`: the mean of the runs' values; `n`: the runs' n summed;
* `ci_low`, `ci_high`: the union of every run's own interval, widened, with three runs or more, to
  the t-interval over the run values (mean ± t(N−1) · sd / √N, at the spec's confidence);
* `repeats`: each run's value, interval, n, verdict and own interval method, the between-run
  standard deviation and range, and `interval_method`, the rule above in words; the figure's own
  `interval_method` names the rule and the runs' methods.

Why this rule and not a pooled interval. A run's own interval assumes its requests are independent
draws; under queueing they are not, and such intervals are known to be too narrow (the reason to
repeat at all). The variance of one run's value is the within-run noise plus the run-to-run effect
(a random-effects model: τ² + σ²), and the sample variance of the N run values estimates exactly
that sum without trusting any within-run interval, so the t-interval over the run values is the
honest interval for their mean. But with a handful of runs that variance has N − 1 degrees of
freedom: two runs agreeing by chance would give a narrow t-interval, so the union with every run's
own interval keeps the verdict interval never narrower than a single run's. With two runs the
t-quantile is 12.7 (one degree of freedom): the union alone is used, i.e. a claim holds only when
it holds in each run. An open end in any run leaves the combined end open.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pyarrow as pa

from pipeline.analysis.declare import metrics
from pipeline.analysis.judge.figures import figure_key, figure_rows, headline_figures
from pipeline.analysis.judge.until_figures import sequential
from pipeline.analysis.statistics import dependence
from pipeline.analysis.statistics.stats import (
    INCONCLUSIVE,
    INTERVAL_RULE,
    UNSTEADY_UNDECIDED,
    effective_samples,
    steady_verdict,
    verdict,
)
from pipeline.analysis.tabulate.repeats import run_numbers, run_timings
from pipeline.analysis.tabulate.tables import analyse_all
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.spec import Spec

# what the pack keeps of each run's figure (a run's own interval method where the analysis names it)
RUN_KEYS = ("repeat", "measured", "ci_low", "ci_high", "n", "verdict", "interval_method", "design_effect")
MIN_RUNS_FOR_T = 3  # below it the t-quantile (12.7 at two runs) says nothing a decision can use


def with_repeats(
    figures: list[dict],
    spec: Spec,
    raw_timings: Path | pa.Table,
    accuracy_summary: pa.Table | None = None,
    queries: QueryCatalog = REPO_QUERIES,
) -> list[dict]:
    """`figures` as they are for raw timings of one run; for several runs, each figure measured
    from the raw timings (latency, throughput, cost) combined over the runs."""
    repeats = run_numbers(raw_timings)
    if len(repeats) < 2:
        return figures
    per_run: dict[tuple[str, str, str], list[dict]] = {}
    for repeat in repeats:
        for item in run_figures(spec, run_timings(raw_timings, repeat), accuracy_summary, queries):
            per_run.setdefault(figure_key(item), []).append({"repeat": repeat, **item})
    return [
        over_runs(figure, per_run[key], spec)
        if (key := figure_key(figure)) in per_run and len(per_run[key]) == len(repeats)
        else figure
        for figure in figures
    ]


def over_runs(figure: dict, runs: list[dict], spec: Spec) -> dict:
    """The figure over its runs: `combined`, and with `workload.replay.until` the sequential rule's
    interval and verdict (`until_figures.sequential`)."""
    out = combined(figure, runs, spec.analysis.confidence)
    return sequential(out, runs, spec) if spec.workload.replay.until is not None else out


def unresolved(spec: Spec, raw_timings: pa.Table, queries: QueryCatalog = REPO_QUERIES) -> list[str]:
    """The claimed figures repeated over the runs so far (`raw_timings`, each row with its `repeat`)
    that are still inconclusive: `workload.replay.until: resolved` replays another run while any is."""
    repeats = run_numbers(raw_timings)
    per_run: dict[tuple[str, str, str], list[dict]] = {}
    for repeat in repeats:
        for item in run_figures(spec, run_timings(raw_timings, repeat), None, queries):
            per_run.setdefault(figure_key(item), []).append({"repeat": repeat, **item})
    open_ = []
    for key, runs in per_run.items():
        first = runs[0]
        if first.get("claimed") is None or first.get("not_judged"):
            continue
        item = over_runs(first, runs, spec) if len(runs) > 1 else first
        if item.get("verdict") == INCONCLUSIVE:
            open_.append("/".join(key))
    return open_


def run_figures(spec: Spec, timings: pa.Table, accuracy_summary: pa.Table | None, queries: QueryCatalog) -> list[dict]:
    """One run's latency, throughput and cost figures, as a replay done once reports them (accuracy,
    scored on the labelled slice, is not repeated)."""
    tables = analyse_all(timings, spec, accuracy_summary, queries=queries)
    return headline_figures(spec, figure_rows(tables))


def combined(figure: dict, runs: list[dict], confidence: float) -> dict:
    """The figure over its runs (the module's docstring says why this interval)."""
    values = [run["measured"] for run in runs]
    known = all(value is not None for value in values)
    mean = statistics.fmean(values) if known else None
    sd = statistics.stdev(values) if known else None
    low = min(run["ci_low"] for run in runs) if all(run["ci_low"] is not None for run in runs) else None
    high = max(run["ci_high"] for run in runs) if all(run["ci_high"] is not None for run in runs) else None
    use_t = len(runs) >= MIN_RUNS_FOR_T and mean is not None and sd is not None
    if use_t:
        t_low, t_high = dependence.mean_interval(values, dependence.t_quantile(len(runs), confidence))
        # the t-interval kept inside what the figure can be (≥ 0; ≤ 1 for a fraction), never
        # narrowing the union: a run's own interval may already reach past those bounds
        fraction = metrics.describe(figure["metric"])[0] == "fraction"
        if t_low is not None and t_high is not None:
            low = None if low is None else min(low, max(t_low, 0.0))
            high = None if high is None else max(high, min(t_high, 1.0) if fraction else t_high)
    _, larger_is_better = metrics.describe(figure["metric"])
    # a run without a steady window leaves the combined figure without one
    unsteady = next((run["no_steady_window"] for run in runs if run.get("no_steady_window")), None)
    rule = _method(len(runs), use_t)
    own = list(dict.fromkeys(run["interval_method"] for run in runs if run.get("interval_method")))
    out = {
        **{key: value for key, value in figure.items() if key != "design_effect"},  # run 0's: per run below
        "measured": mean,
        "ci_low": low,
        "ci_high": high,
        "n": sum(run["n"] for run in runs),
        # judged as the figure was, with its tolerance (pipeline/analysis/judge/figures.py `judged`)
        "verdict": None
        if figure.get("not_judged")
        else steady_verdict(
            verdict(figure["claimed"], low, high, larger_is_better, figure.get("tolerance") or 0.0), unsteady
        ),
        "interval_method": f"over {len(runs)} runs: {rule.split(';')[0]}"
        + (f"; each run's own: {' / '.join(own)}" if own else ""),
        **({"no_steady_window": unsteady} if unsteady else {}),
        "repeats": {
            "runs": [{key: run[key] for key in RUN_KEYS if key in run} for run in runs],
            "between_run_sd": sd,
            "between_run_range": [min(values), max(values)] if known else None,
            "interval_method": rule,
        },
    }
    if "early_stopping" in figure:  # each run must be long enough on its own: the union needs every run to hold
        needed = figure["early_stopping"]["min_samples_to_hold"]
        effective = min(effective_samples(run["n"], run.get("design_effect")) for run in runs)
        out["early_stopping"] = {
            **figure["early_stopping"],
            "effective_samples": effective,  # the shortest run's: every run must reach the need
            "long_enough": low is not None and high is not None and effective >= needed,
        }
    out.pop("decision_rule", None)  # run 0's: the union's own below
    if out["verdict"] is not None:
        out["decision_rule"] = UNSTEADY_UNDECIDED if unsteady else INTERVAL_RULE
    return out


def _method(runs: int, use_t: bool) -> str:
    union = f"the union of the {runs} runs' own intervals"
    if use_t:
        t_interval = f"the t-interval over the {runs} run values (mean ± t({runs - 1})·sd/√{runs})"
        return f"{union} and {t_interval}; measured: their mean"
    return f"{union} (a claim holds only if it holds in every run); measured: their mean"
