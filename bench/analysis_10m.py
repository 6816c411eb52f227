"""How long do 10 million raw-timing rows take to aggregate into every analysis table?

    python bench/analysis_10m.py [--rows 10000000] [--itl-mean 100] [--data DIR] [--itl-max-values N]

Generates synthetic raw timings once (bench/analysis_synthetic.py, in a subprocess, so the peak
RSS printed here is the analysis's own), then times each table as its Dagster asset computes it
(one DuckDB session per table, steady_requests staged in each), and all tables from one session
(`pipeline.analysis.analyse_all`). Prints seconds per table, the totals and the peak RSS.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from pipeline import REPO_ROOT, analysis
from pipeline.spec import Spec

BENCH = Path(__file__).resolve().parent


def bench_spec(itl_max_values: int | None) -> Spec:
    data = yaml.safe_load((REPO_ROOT / "examples" / "demo.yaml").read_text())
    data["candidates"][0]["name"], data["candidates"][1]["name"] = "alpha", "beta"
    data["workload"]["replay"].update(warmup_s=60, cooldown_s=60)
    data["sla"] = {"ttft_ms": 200, "e2e_ms": 3000}
    if itl_max_values:
        data["analysis"] = {"itl_max_values": itl_max_values}
    return Spec.model_validate(data)


def timed(label: str, compute) -> tuple[float, object]:
    started = time.perf_counter()
    result = compute()
    seconds = time.perf_counter() - started
    rows = result.num_rows if isinstance(result, pa.Table) else sum(t.num_rows for t in result.values())
    print(f"  {label:<22} {seconds:7.2f} s  ({rows:,} rows)", flush=True)
    return seconds, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--itl-mean", type=float, default=100.0)
    parser.add_argument("--data", type=Path, default=Path("/tmp/loadproof_bench"))
    parser.add_argument("--itl-max-values", type=int, default=None, help="override the spec's ITL bound")
    parser.add_argument("--per-table", action="store_true", help="also time each table in its own session")
    args = parser.parse_args()

    raw = args.data / f"raw_timings_{args.rows}_{int(args.itl_mean)}.parquet"
    if not raw.exists():
        subprocess.run([sys.executable, str(BENCH / "analysis_synthetic.py"), str(raw), "--rows", str(args.rows),
                        "--itl-mean", str(args.itl_mean)], check=True)
    counts = pq.read_table(raw, columns=["content_chunks", "status"])
    ok = pc.equal(counts.column("status"), "ok")
    gaps = pc.sum(pc.subtract(pc.filter(counts.column("content_chunks"), ok), 1)).as_py()
    spec = bench_spec(args.itl_max_values)
    print(f"{args.rows:,} raw-timing rows, {gaps:,} inter-chunk gaps, {raw.stat().st_size / 1e9:.2f} GB; "
          f"DuckDB {duckdb.__version__} on {os.cpu_count()} cores (shared with other work); "
          f"ITL bound {spec.analysis.itl_max_values:,} gaps")

    if args.per_table:
        print("one session per table (as the Dagster assets run, steady_requests staged in each):")
        total = 0.0
        for label, compute in (
            ("throughput", lambda: analysis.throughput(raw, spec)),
            ("throughput_buckets", lambda: analysis.throughput_buckets(raw, spec)),
            ("error_breakdown", lambda: analysis.error_breakdown(raw, spec)),
            ("cost_per_decision", lambda: analysis.cost_per_decision(raw, spec)),
            ("latency_percentiles", lambda: analysis.latency_percentiles(raw, spec)),
        ):
            total += timed(label, compute)[0]
        print(f"  {'total':<22} {total:7.2f} s")

    print("all tables from one session (what analyse_all does), step by step:")
    started = time.perf_counter()
    with analysis._session(raw, spec) as session:
        print(f"  {'steady_requests':<22} {time.perf_counter() - started:7.2f} s  (staged)")
        timed("throughput", lambda: analysis._throughput(session))
        timed("throughput_buckets", lambda: session.run("throughput_buckets"))
        timed("error_breakdown", lambda: session.run("error_breakdown"))
        timed("cost_per_decision", lambda: analysis._cost(session, spec, None))
        _, latency = timed("latency_percentiles", lambda: analysis._latency(session, spec))
    print(f"  {'all tables':<22} {time.perf_counter() - started:7.2f} s")
    for row in latency.to_pylist():
        if row["metric"] == "itl_ms" and row["scope"] == "all" and row["percentile"] == "p99":
            print(f"    {row['candidate']} itl_ms_p99 {row['value']:.3f} ms, n {row['n']:,} gaps, 1 slice in {row['sample_every']}")
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"peak RSS {peak_gb:.2f} GB")


if __name__ == "__main__":
    main()
