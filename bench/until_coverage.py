"""`bench/ci_coverage.py --until`: repeats until resolved (pipeline/analysis/statistics/until_resolved.py) on the
virtual clock. Coverage of the truth by each figure's settled interval, and the wrong-verdict rate
when the claim equals the truth (issue 31 item 3; goal: every kind ≥ 0.93 at 85 % load, wrong ≤ 5 %).

Each figure kind is claimed at its truth (one long run's value), with the catalogue's default
tolerance and, as the strictest case, with none. "Not reproduced" is then wrong; "holds" and "holds
within tolerance" are right. A pool of `--runs` independent demo-sized replays is simulated and
analysed once; each trial draws `--max-runs` distinct runs of the pool in a random order (seeded) and
looks after every run from the second: the figures' runs values, the t-interval across them at the
look's spent α, the first decisive look kept (`settle`). The trial's runs: until every figure is
resolved or `--max-runs`. Trials share the pool's runs, so they describe the procedure on that
pool's distribution of run values (a bootstrap), not fully independent experiments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bench import coverage_sim as sim
from pipeline.analysis.declare import metrics
from pipeline.analysis.statistics.stats import wilson_interval
from pipeline.analysis.statistics.until_resolved import INCONCLUSIVE, look_alphas, settle

NOT_REPRODUCED = "not reproduced"
METRIC = {kind: f"{metric}_p{round(q * 100)}" for kind, (metric, q) in sim.LATENCY_KINDS.items()} | {
    "output_tokens_per_s": "output_tokens_per_s",
    "goodput": "goodput_requests_per_s",
    "sla_attainment": "sla_attainment",
    "accuracy": "accuracy",
}


@dataclass
class KindTally:
    trials: int = 0
    covered: int = 0
    wrong: int = 0
    runs_at_resolution: list[int] = field(default_factory=list)  # one per resolved trial

    @property
    def resolved(self) -> int:
        return len(self.runs_at_resolution)


def pool_values(load: float, capacity: float, pool: int, seed: int, truth_factor: int, batches, intervals, process):
    """(truth per kind, each pool run's value per kind) at one load (the truth as ci_coverage's)."""
    profile = sim.demo_profile()
    rate = load * capacity
    long_run = sim.truths(
        profile, sim.arrivals(rate, sim.RUN_S * truth_factor, 10_000_019 + seed, process), sim.REPLAY_S
    )
    sla_ttft_ms = sorted(long_run["_ttft_values"])[int(0.9 * long_run["_requests"])]
    truth = {kind: long_run[kind] for kind in (*sim.LATENCY_KINDS, "output_tokens_per_s")}
    truth.update(sim.sla_truths(long_run, sla_ttft_ms))
    run_spec = sim.spec(sla_ttft_ms, batches, intervals)
    values: dict[str, list[float]] = {kind: [] for kind in METRIC}
    own: dict[str, list[tuple]] = {kind: [] for kind in METRIC}  # each run's own interval: for runs all equal
    for run in range(pool):
        table = sim.raw_timings(profile, sim.arrivals(rate, sim.RUN_S, seed * 1_000 + run, process))
        for kind, estimate in sim.estimates(table, run_spec).items():
            values[kind].append(estimate.value)
            own[kind].append((estimate.ci_low, estimate.ci_high))
    oracle, items, truth["accuracy"] = sim.accuracy_oracle()
    for run in range(pool):
        correct, n = sim.accuracy_run(items, oracle, seed=seed * 1_000 + run + int(load * 1e6))
        values["accuracy"].append(correct / n)
        own["accuracy"].append(wilson_interval(correct, n))
    return truth, values, own


def trials(truth, values, own, n_trials: int, max_runs: int, spending: str, tolerant: bool, seed: int):
    """Per kind: coverage, wrong verdicts, resolutions; and the runs each trial used."""
    alphas = look_alphas(max_runs, 0.05, spending)
    claims = {}
    for kind, name in METRIC.items():
        unit, larger = metrics.describe(name)
        tolerance = metrics.tolerance_default(name).fraction if tolerant else 0.0
        claims[kind] = (truth[kind], larger, tolerance, unit == "fraction")
    rng = np.random.default_rng(seed)
    pool = len(next(iter(values.values())))
    tallies = {kind: KindTally() for kind in METRIC}
    used = []
    for _ in range(n_trials):
        order = rng.permutation(pool)[:max_runs]
        chosen = {kind: [values[kind][i] for i in order] for kind in METRIC}
        settled = settle(chosen, claims, alphas, {kind: [own[kind][i] for i in order] for kind in METRIC})
        stop = max(item.runs for item in settled.values())
        used.append(stop if all(item.verdict != INCONCLUSIVE for item in settled.values()) else max_runs)
        for kind, item in settled.items():
            tally = tallies[kind]
            tally.trials += 1
            low = -np.inf if item.ci_low is None else item.ci_low
            high = np.inf if item.ci_high is None else item.ci_high
            tally.covered += low <= truth[kind] <= high
            tally.wrong += item.verdict == NOT_REPRODUCED
            if item.verdict != INCONCLUSIVE:
                tally.runs_at_resolution.append(item.runs)
    return tallies, used


def report(load: float, truth, tallies_by_case: dict[str, dict[str, KindTally]], used_by_case) -> list[str]:
    """The table's lines for one load: per kind and case, coverage, wrong share, resolved share and
    the mean runs at resolution."""
    cases = list(tallies_by_case)
    header = "kind".ljust(20) + "".join(f"{'cover':>8}{'wrong':>7}{'resolved':>9}{'runs':>6}  " for _ in cases)
    lines = [f"load {load:.0%}: " + " | ".join(cases), header]
    for kind in METRIC:
        line = kind.ljust(20)
        for case in cases:
            t = tallies_by_case[case][kind]
            runs = f"{np.mean(t.runs_at_resolution):.1f}" if t.runs_at_resolution else "—"
            line += f"{t.covered / t.trials:>8.3f}{t.wrong / t.trials:>7.3f}{t.resolved / t.trials:>9.2f}{runs:>6}  "
        lines.append(line + f"  truth {truth[kind]:.4g}")
    lines.append(
        "runs per trial (mean): " + ", ".join(f"{case} {np.mean(used):.1f}" for case, used in used_by_case.items())
    )
    return lines
