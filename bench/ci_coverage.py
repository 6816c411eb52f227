"""Do the pack's 95 % intervals contain the truth 95 % of the time? Coverage of every figure
kind's interval on the reference endpoint's virtual-clock simulator (issue 16, item 3).

The truth of each figure comes from one very long run of the same arrival process (100× a
replay, or 20× with --quick); then `--runs` independent demo-sized replays (60 s, seeded, from an
idle engine, the demo's 5 s warm-up and cool-down cut) at two loads, about 30 % and 85 % of the
simulated endpoint's capacity, are analysed by the project's own code, and the share of intervals
that contain the truth is counted per figure kind. Accuracy goes through the reference endpoint's
oracle (80 % correct) on slices of the demo's size. The SLA under test is a TTFT bound at the
long run's p90, so attainment is near 0.9 and its interval says something.

Goal: every kind between 0.93 and 0.985 at both loads. An open interval end (a run too short to
bound a tail percentile on that side) covers everything on its side; the `bounded` columns say how
often both ends were bounded.

Wrong verdicts (issue 42 item 6): each run's figure judged against a claim equal to its truth (the
truth just meets it, so *not reproduced* is wrong) by the pack's own rules, as if the window had
no steady state (`stats.unsteady_verdict`: the decision rules that decide an unsteady window, which
only ever add *not reproduced*), with the catalogue's default tolerance (`wrong`) and with none
(`wrong0`). A steady window's verdict is the interval's alone, and can only be wrong as often as
the unsteady one. Goal: at most 0.05 for every kind at every load.

    .venv/bin/python bench/ci_coverage.py --runs 200 --seed 1          # full (~N min on 2 cores)
    .venv/bin/python bench/ci_coverage.py --quick                      # 40 runs, shorter truth
    .venv/bin/python bench/ci_coverage.py --until --loads 0.85 --runs 120 --trials 2000  # until resolved
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import coverage_sim as sim  # noqa: E402
from bench import until_coverage  # noqa: E402
from pipeline.analysis.declare import metrics  # noqa: E402
from pipeline.analysis.statistics.stats import NOT_REPRODUCED, unsteady_verdict, verdict, wilson_interval  # noqa: E402

GOAL = (0.93, 0.985)
WRONG_GOAL = 0.05
KINDS = [*sim.LATENCY_KINDS, *sim.RATE_KINDS, "accuracy"]
# each kind's figure in the catalogue: its direction, kind and default tolerance
METRIC_OF_KIND = {
    **{kind: f"{metric.removesuffix('_ms')}_ms_p{round(q * 100)}" for kind, (metric, q) in sim.LATENCY_KINDS.items()},
    **sim.RATE_KINDS,
    "accuracy": "accuracy",
}


def wrongly_not_reproduced(kind: str, estimate: sim.Estimate, truth: float, tolerant: bool) -> bool:
    """Judged against a claim equal to the truth by the rules of a window with no steady state:
    *not reproduced*, though the truth meets the claim."""
    metric = METRIC_OF_KIND[kind]
    _, larger_is_better = metrics.describe(metric)
    tolerance = metrics.tolerance_default(metric).fraction if tolerant else 0.0
    word = verdict(truth, estimate.ci_low, estimate.ci_high, larger_is_better, tolerance)
    word, _ = unsteady_verdict(word, truth, estimate.ci_low, estimate.ci_high, metrics.metric(metric).kind, tolerance)
    return word == NOT_REPRODUCED


@dataclass
class Tally:
    runs: int = 0
    covered: int = 0
    bounded: int = 0  # intervals with both ends bounded
    wrong: int = 0  # not reproduced against a claim equal to the truth, default tolerance
    wrong_strict: int = 0  # the same with no tolerance

    def add(self, kind: str, estimate: sim.Estimate, truth: float) -> None:
        self.runs += 1
        self.covered += estimate.covers(truth)
        self.bounded += estimate.bounded
        self.wrong += wrongly_not_reproduced(kind, estimate, truth, tolerant=True)
        self.wrong_strict += wrongly_not_reproduced(kind, estimate, truth, tolerant=False)

    @property
    def coverage(self) -> float:
        return self.covered / self.runs if self.runs else float("nan")


@dataclass(frozen=True)
class LoadResult:
    load: float
    rate_per_s: float
    truth: dict[str, float]
    tallies: dict[str, Tally]


def measure_load(
    load: float,
    capacity: float,
    runs: int,
    seed: int,
    truth_factor: int,
    batches: int | None,
    intervals: str,
    process: str,
) -> LoadResult:
    profile = sim.demo_profile()
    rate = load * capacity
    long_offered = sim.arrivals(rate, sim.RUN_S * truth_factor, 10_000_019 + seed, process)
    long_run = sim.truths(profile, long_offered, settle_s=sim.REPLAY_S)
    sla_ttft_ms = sorted(long_run["_ttft_values"])[int(0.9 * long_run["_requests"])]
    truth = {kind: long_run[kind] for kind in (*sim.LATENCY_KINDS, "output_tokens_per_s")}
    truth.update(sim.sla_truths(long_run, sla_ttft_ms))
    run_spec = sim.spec(sla_ttft_ms, batches, intervals)
    tallies = {kind: Tally() for kind in KINDS}
    for run in range(runs):
        table = sim.raw_timings(profile, sim.arrivals(rate, sim.RUN_S, seed * 1_000 + run, process))
        for kind, estimate in sim.estimates(table, run_spec).items():
            tallies[kind].add(kind, estimate, truth[kind])
    oracle, items, accuracy_truth = sim.accuracy_oracle()
    truth["accuracy"] = accuracy_truth
    for run in range(runs):
        correct, n = sim.accuracy_run(items, oracle, seed=seed * 1_000 + run + int(load * 1e6))
        low, high = wilson_interval(correct, n)
        tallies["accuracy"].add("accuracy", sim.Estimate(correct / n, low, high), accuracy_truth)
    return LoadResult(load, rate, truth, tallies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="demo-sized replays per load (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="40 runs per load and a 20x truth run (a smoke test)")
    parser.add_argument(
        "--batches", type=int, help="send-time batches of the batch-means intervals (default: the spec's)"
    )
    parser.add_argument(
        "--intervals", default="dependence_aware", choices=["dependence_aware", "independent"], help="the spec's method"
    )
    parser.add_argument(
        "--arrivals", default="poisson", choices=sorted(sim.BURST_FACTORS), help="arrival process (default: poisson)"
    )
    parser.add_argument("--loads", default="0.3,0.85", help="shares of the endpoint's capacity (default 0.3,0.85)")
    parser.add_argument(
        "--until", action="store_true", help="until resolved: --runs is the pool, each trial up to --max-runs of it"
    )
    parser.add_argument("--trials", type=int, default=2000, help="--until: trials drawn from the pool")
    parser.add_argument("--max-runs", type=int, default=10, help="--until: the most runs a trial may use")
    parser.add_argument("--spending", default="obrien_fleming", choices=["obrien_fleming", "pocock", "both"])
    parser.add_argument(
        "--replay-s", type=float, default=sim.REPLAY_S, help="each run's length in s (default the demo's 60)"
    )
    args = parser.parse_args(argv)
    runs = min(args.runs, 40) if args.quick else args.runs
    sim.RUN_S = args.replay_s
    truth_factor = 20 if args.quick else 100
    loads = [float(x) for x in args.loads.split(",")]
    started = time.perf_counter()
    capacity = sim.capacity_requests_per_s(sim.demo_profile())
    print(
        f"capacity {capacity:.2f} requests/s (demo profile, this length mix); {runs} runs per load, "
        f"seed {args.seed}; {args.arrivals} arrivals; intervals {args.intervals}, "
        f"batches {args.batches or 'from the spec'}; each run {sim.RUN_S:g} s"
    )
    if args.until:
        return until(args, loads, capacity, runs, truth_factor, started)
    results = [
        measure_load(load, capacity, runs, args.seed, truth_factor, args.batches, args.intervals, args.arrivals)
        for load in loads
    ]
    columns = f"{'cover@{load}':>12}{'bounded':>9}{'wrong':>7}{'wrong0':>7}{'truth':>11}"
    header = "kind".ljust(20) + "".join(columns.replace("{load}", f"{r.load:.0%}") for r in results)
    print(header)
    shares, wrong = [], []
    for kind in KINDS:
        line = kind.ljust(20)
        for result in results:
            tally = result.tallies[kind]
            shares.append(tally.coverage)
            wrong.append(tally.wrong / tally.runs)
            line += f"{tally.coverage:>12.3f}{tally.bounded / tally.runs:>9.2f}{tally.wrong / tally.runs:>7.3f}"
            line += f"{tally.wrong_strict / tally.runs:>7.3f}{result.truth[kind]:>11.4g}"
        print(line)
    print(
        f"({time.perf_counter() - started:.0f} s; goal {GOAL[0]}–{GOAL[1]} coverage and at most {WRONG_GOAL} "
        "wrong verdicts (default tolerances) for every kind at every load)"
    )
    print(f"coverage_min={min(shares):.3f} coverage_max={max(shares):.3f} wrong_max={max(wrong):.3f}")
    return 0


def until(args, loads: list[float], capacity: float, pool: int, truth_factor: int, started: float) -> int:
    """The until-resolved mode (bench/until_coverage.py): per load, with the default tolerances and none."""
    print(f"until resolved: pool {pool} runs, {args.trials} trials of at most {args.max_runs} runs")
    for load in loads:
        truth, values, own = until_coverage.pool_values(
            load, capacity, pool, args.seed, truth_factor, args.batches, args.intervals, args.arrivals
        )
        for spending in ("obrien_fleming", "pocock") if args.spending == "both" else (args.spending,):
            cases, used = {}, {}
            for case, tolerant in (("default tolerances", True), ("no tolerance", False)):
                cases[case], used[case] = until_coverage.trials(
                    truth, values, own, args.trials, args.max_runs, spending, tolerant, args.seed
                )
            print(spending)
            print("\n".join(until_coverage.report(load, truth, cases, used)))
    print(f"({time.perf_counter() - started:.0f} s; goal: coverage >= 0.93 for every kind, wrong verdicts <= 0.05)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
