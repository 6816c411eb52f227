"""How long do 10 million raw-timing rows take to aggregate into every analysis table?

    python bench/analysis_10m.py [--rows 10000000] [--itl-mean 100] [--data DIR] [--per-table] [--verify]
                                 [--baseline REF [--repeat N]]

1. Generates synthetic raw timings once (bench/analysis_synthetic.py, ~1.2e9 inter-chunk gaps).
2. Builds their ITL histogram once (sql/itl_histogram.sql), as the replay does when it writes
   raw_timings: there from the table still in memory, here from the Parquet file (so this time
   includes decoding every gap list: an upper bound). Timed on its own, in a subprocess.
3. Times every analysis table from one DuckDB session (`pipeline.analysis.tabulate.tables.analyse_all`, the
   histogram bound), step by step: seconds per table, the total and the process's peak RSS.
   `--per-table` also times each table in its own session, as its Dagster asset computes it.
4. `--verify` times what `loadproof verify` does: every table re-computed from the raw timings
   alone (the ITL histogram re-built from the gap lists), in a subprocess, and checks that its
   ITL figures equal those read from the stored histogram.

5. `--baseline REF` (e.g. `--baseline main`) times before and after in one run on the same data:
   the analysis code of git REF (`git archive` of it into a temporary folder, imported through
   PYTHONPATH) and then the current code, each in a subprocess of its own (so each peak RSS is
   its own), and checks that every table of the two is the same. `--repeat N` alternates the
   two N times and prints each step's best wall and CPU seconds: CPU seconds (every thread's)
   say more than the wall clock on a machine shared with other work.

Generation and the histogram run in subprocesses, so the peak RSS printed for the analysis is
its own. The load average (`os.getloadavg`) is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from pipeline import REPO_ROOT
from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.files.layout import write_parquet
from pipeline.spec import Spec

BENCH = Path(__file__).resolve().parent


def bench_spec() -> Spec:
    data = yaml.safe_load((REPO_ROOT / "examples" / "demo.yaml").read_text())
    data["candidates"][0]["name"], data["candidates"][1]["name"] = "alpha", "beta"
    data["workload"]["replay"].update(warmup_s=60, cooldown_s=60)
    data["sla"] = {"ttft_ms": 200, "e2e_ms": 3000}
    return Spec.model_validate(data)


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def cpu_s() -> float:
    """CPU seconds this process has used, every thread (DuckDB's too): less at the mercy of the
    other work on a shared machine than the wall clock."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


STEP_TIMES: dict[str, tuple[float, float]] = {}  # label → (wall s, CPU s), for --session-only


def timed(label: str, compute) -> tuple[float, object]:
    started, cpu_started = time.perf_counter(), cpu_s()
    result = compute()
    seconds, cpu = time.perf_counter() - started, cpu_s() - cpu_started
    STEP_TIMES[label] = (seconds, cpu)
    rows = f"  ({result.num_rows:,} rows)" if isinstance(result, pa.Table) else ""
    print(f"  {label:<22} {seconds:7.2f} s  cpu {cpu:6.2f} s{rows}", flush=True)
    return seconds, result


def itl_p99(latency: pa.Table) -> dict:
    return {
        row["candidate"]: [row["value"], row["ci_low"], row["ci_high"], row["n"]]
        for row in latency.to_pylist()
        if row["metric"] == "itl_ms" and row["scope"] == "all" and row["percentile"] == "p99"
    }


def build_histogram(raw: Path, out: Path) -> None:
    started = time.perf_counter()
    histogram = analysis_tables.itl_histogram(raw, bench_spec())
    write_parquet(histogram, out)
    print(
        f"  itl_histogram built in {time.perf_counter() - started:.1f} s ({histogram.num_rows:,} rows, "
        f"{out.stat().st_size / 1e6:.1f} MB), peak RSS {peak_rss_gb():.2f} GB",
        flush=True,
    )


def verify_path(raw: Path) -> None:
    """Every table from the raw timings alone, as `loadproof verify` computes them."""
    started = time.perf_counter()
    tables = analysis_tables.analyse_all(raw, bench_spec())
    print(
        f"  re-computed from the raw timings alone in {time.perf_counter() - started:.1f} s, "
        f"peak RSS {peak_rss_gb():.2f} GB",
        flush=True,
    )
    print("ITL_P99 " + json.dumps(itl_p99(tables["latency_percentiles"])), flush=True)


def one_session(raw: Path, histogram: Path, spec: Spec) -> dict[str, pa.Table]:
    print("all tables from one session (what analyse_all does), step by step:")
    started, cpu_started = time.perf_counter(), cpu_s()
    tables: dict[str, pa.Table] = {}
    session = timed("steady_requests", lambda: analysis_tables.steady_session(raw, spec))[1]
    with session:
        tables["throughput"] = timed("throughput", lambda: analysis_tables._throughput(session))[1]
        tables["throughput_buckets"] = timed("throughput_buckets", lambda: session.staged("throughput_buckets"))[1]
        tables["error_breakdown"] = timed("error_breakdown", lambda: session.run("error_breakdown"))[1]
        tables["cost_per_decision"] = timed("cost_per_decision", lambda: analysis_tables._cost(session, spec, None))[1]
        tables["latency_percentiles"] = timed(
            "latency_percentiles", lambda: analysis_tables._latency(session, spec, histogram)
        )[1]
    seconds, cpu = time.perf_counter() - started, cpu_s() - cpu_started
    STEP_TIMES["all tables"] = (seconds, cpu)
    print(f"  {'all tables':<22} {seconds:7.2f} s  cpu {cpu:6.2f} s   peak RSS {peak_rss_gb():.2f} GB")
    return tables


def session_only(raw: Path, histogram: Path, out: Path) -> None:
    """One session's tables (the code `pipeline` imports: PYTHONPATH picks it), written to `out`."""
    print(f"  code: {Path(analysis_tables.__file__).parent}; {load()}", flush=True)
    for name, table in one_session(raw, histogram, bench_spec()).items():
        write_parquet(table, out / f"{name}.parquet")
    print(f"  {load()}", flush=True)
    times = {"steps": STEP_TIMES, "peak_rss_gb": peak_rss_gb(), "load": os.getloadavg()[0]}
    (out / "times.json").write_text(json.dumps(times))


def baseline_tree(ref: str, folder: Path) -> Path:
    """The repository at `ref` (its tracked files, as `git archive` writes them) under `folder`."""
    archive = folder / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(REPO_ROOT), "archive", ref], stdout=out, check=True)
    commit = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    tree = folder / commit
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def timed_subprocess(label: str, raw: Path, histogram: Path, out: Path, code: Path) -> None:
    print(f"{label} (subprocess, pipeline from {code}):", flush=True)
    env = {**os.environ, "PYTHONPATH": str(code)}
    subprocess.run(
        [sys.executable, __file__, "--session-only", str(raw), str(histogram), str(out)], env=env, check=True
    )


def same_value(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def compare_tables(before: Path, after: Path) -> None:
    """Every table of the two runs, cell by cell: identical, or which columns differ and by how much."""
    print("before and after, table by table:")
    for path in sorted(before.glob("*.parquet")):
        old, new = pq.read_table(path), pq.read_table(after / path.name)
        if old.schema != new.schema or old.num_rows != new.num_rows:
            print(f"  {path.stem:<22} DIFFERENT shape: {old.shape} {old.schema.names} / {new.shape} {new.schema.names}")
            continue
        cells, worst, columns = 0, 0.0, set()
        for old_row, new_row in zip(old.to_pylist(), new.to_pylist()):
            for key, value in old_row.items():
                if same_value(value, new_row[key]):
                    continue
                cells += 1
                columns.add(key)
                if isinstance(value, float) and isinstance(new_row[key], float) and value:
                    worst = max(worst, abs(new_row[key] - value) / abs(value))
                else:
                    worst = math.inf
        verdict = (
            "identical"
            if cells == 0
            else f"{cells} cells differ, in {', '.join(sorted(columns))} (largest relative difference {worst:.1e})"
        )
        print(f"  {path.stem:<22} {old.num_rows:>7,} rows  {verdict}")


def before_and_after(ref: str, raw: Path, histogram: Path, repeat: int) -> None:
    """`repeat` times, alternately, REF's code then this checkout's on the same data; each
    step's best wall and CPU seconds of the repeats, the largest peak RSS, every table compared."""
    with tempfile.TemporaryDirectory(prefix="loadproof-baseline-") as folder:
        tree = baseline_tree(ref, Path(folder))
        sides = {f"before ({ref}, {tree.name})": tree, "after (this checkout)": REPO_ROOT}
        runs: dict[str, list[dict]] = {label: [] for label in sides}
        for turn in range(repeat):
            for label, code in sides.items():
                out = Path(folder) / f"{label.split()[0]}{turn}"
                timed_subprocess(f"{label}, run {turn + 1} of {repeat}", raw, histogram, out, code)
                runs[label].append(json.loads((out / "times.json").read_text()))
        compare_tables(Path(folder) / "before0", Path(folder) / "after0")
    print(f"best of {repeat} (wall s / CPU s), alternating runs; peak RSS the largest, load average at the end:")
    steps = list(next(iter(runs.values()))[0]["steps"])
    print(f"  {'step':<22}" + "".join(f"{label.split()[0]:>18}" for label in runs))
    for step in steps:
        cells = []
        for side in runs.values():
            wall = min(run["steps"][step][0] for run in side)
            cpu = min(run["steps"][step][1] for run in side)
            cells.append(f"{wall:8.2f} / {cpu:6.2f}")
        print(f"  {step:<22}" + "".join(f"{cell:>18}" for cell in cells))
    rss = "".join(f"{max(run['peak_rss_gb'] for run in side):>15.2f} GB" for side in runs.values())
    print(f"  {'peak RSS':<22}" + rss)
    loads = "".join(f"{' '.join(format(run['load'], '.1f') for run in side):>18}" for side in runs.values())
    print(f"  {'load average (1 min)':<22}" + loads)


def per_table(raw: Path, histogram: Path, spec: Spec) -> None:
    print("one session per table (as the Dagster assets run, steady_requests staged in each):")
    total = 0.0
    for label, compute in (
        ("throughput", lambda: analysis_tables.throughput(raw, spec)),
        ("throughput_buckets", lambda: analysis_tables.throughput_buckets(raw, spec)),
        ("error_breakdown", lambda: analysis_tables.error_breakdown(raw, spec)),
        ("cost_per_decision", lambda: analysis_tables.cost_per_decision(raw, spec)),
        ("latency_percentiles", lambda: analysis_tables.latency_percentiles(raw, spec, histogram)),
    ):
        total += timed(label, compute)[0]
    print(f"  {'total':<22} {total:7.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--itl-mean", type=float, default=100.0)
    parser.add_argument("--data", type=Path, default=Path("/tmp/loadproof_bench"))
    parser.add_argument("--per-table", action="store_true", help="also time each table in its own session")
    parser.add_argument("--verify", action="store_true", help="also time the re-computation from the raw timings alone")
    parser.add_argument(
        "--baseline", metavar="REF", help="first time git REF's analysis code on the same data (before and after)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="with --baseline: alternate the two this many times")
    parser.add_argument("--session-only", nargs=3, type=Path, metavar=("RAW", "HIST", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--build-histogram", nargs=2, type=Path, metavar=("RAW", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--verify-path", type=Path, metavar="RAW", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_histogram:
        return build_histogram(*args.build_histogram)
    if args.verify_path:
        return verify_path(args.verify_path)
    if args.session_only:
        return session_only(*args.session_only)

    stem = f"{args.rows}_{int(args.itl_mean)}"
    raw, histogram = args.data / f"raw_timings_{stem}.parquet", args.data / f"itl_histogram_{stem}.parquet"
    if not raw.exists():
        subprocess.run(
            [
                sys.executable,
                str(BENCH / "analysis_synthetic.py"),
                str(raw),
                "--rows",
                str(args.rows),
                "--itl-mean",
                str(args.itl_mean),
            ],
            check=True,
        )
    spec = bench_spec()
    if not analysis_tables.itl_histogram_usable(histogram, spec):
        print(f"ITL histogram (once, when raw_timings is written; here from the Parquet file, {load()}):")
        subprocess.run([sys.executable, __file__, "--build-histogram", str(raw), str(histogram)], check=True)
    counts = pq.read_table(raw, columns=["content_chunks", "status"])
    ok = pc.equal(counts.column("status"), "ok")
    gaps = pc.sum(pc.subtract(pc.filter(counts.column("content_chunks"), ok), 1)).as_py()
    print(
        f"{args.rows:,} raw-timing rows, {gaps:,} inter-chunk gaps, {raw.stat().st_size / 1e9:.2f} GB; "
        f"itl_histogram {pq.read_metadata(histogram).num_rows:,} rows; DuckDB {duckdb.__version__} on "
        f"{os.cpu_count()} cores (shared with other work); {load()}"
    )
    del counts, ok

    if args.per_table:
        per_table(raw, histogram, spec)
    if args.baseline:
        before_and_after(args.baseline, raw, histogram, args.repeat)
        print(f"done; {load()}")
        return
    latency = one_session(raw, histogram, spec)["latency_percentiles"]
    from_histogram = itl_p99(latency)
    for candidate, (value, low, high, n) in from_histogram.items():
        print(f"    {candidate} itl_ms_p99 {value:.3f} ms [{low:.3f}, {high:.3f}], n {n:,} gaps (every gap, to 1 µs)")

    if args.verify:
        print(f"what `loadproof verify` does (histogram re-built from the gap lists; subprocess, {load()}):")
        done = subprocess.run(
            [sys.executable, __file__, "--verify-path", str(raw)], check=True, capture_output=True, text=True
        )
        for line in done.stdout.splitlines():
            if line.startswith("ITL_P99 "):
                same = json.loads(line[len("ITL_P99 ") :]) == {k: list(v) for k, v in from_histogram.items()}
                print(f"  ITL p99 figures equal to those from the stored histogram: {same}")
            else:
                print(line)
    print(f"done; {load()}")


if __name__ == "__main__":
    main()
