"""Benchmark: ingest and profile a 10-million-row production log; prints seconds and peak RSS.

    .venv/bin/python bench/ingest_profile_10m.py [--rows 10000000] [--format azure_csv|mooncake_jsonl]
        [--dir /tmp/loadproof-bench] [--memory-limit 2GB]

The synthetic generator writes an Azure-trace-shaped CSV (TIMESTAMP with 7 fractional digits,
no time zone; ContextTokens; GeneratedTokens; no trailing newline) or a Mooncake-shaped JSONL
(timestamp ms, input_length, output_length, hash_ids) with DuckDB itself: Poisson-like arrivals
at ~2,800 requests/s whose rate swells in a burst, log-normal lengths, a handful of broken lines.
The figures are for ingest (log → canonical Parquet + quarantine) and for the profile of the
whole log (quantiles, histograms, burstiness, prefix reuse); peak RSS is the process's maximum
resident set (ru_maxrss) of the process that ingests and profiles, which includes DuckDB's
buffers; the synthetic log is written by a child process so its memory is not counted. The
busiest-window sample (`draw_sample`: two binary searches over the sorted arrivals, then
sql/production_sample.sql) is timed on its own line.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.duck import connect as duck  # noqa: E402
from pipeline.duck.catalog import QueryCatalog  # noqa: E402
from pipeline.spec.workload import LogSource  # noqa: E402
from pipeline.workload.logs.ingest import ingest  # noqa: E402

SEED = 20231116
BENCH_QUERIES = QueryCatalog((REPO / "bench" / "sql",))  # the synthetic-log generators: bench-only SQL


def generate(path: Path, rows: int, log_format: str) -> float:
    """Write the synthetic log with bench/sql/bench_synthetic_<format>.sql; returns seconds."""
    started = time.perf_counter()
    with duck.connection() as con:
        duck.run(con, "bench_synthetic_requests", queries=BENCH_QUERIES)  # the stream the formats share
        relation = duck.run(con, f"bench_synthetic_{log_format}", {"rows": rows, "seed": SEED / 1e8}, BENCH_QUERIES)
        if log_format == "azure_csv":
            relation.write_csv(str(path), header=True, quotechar="")
        else:
            relation.write_csv(str(path), header=False, quotechar="", sep="\t")
    return time.perf_counter() - started


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--format", choices=["azure_csv", "mooncake_jsonl"], default="azure_csv")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary one)")
    parser.add_argument("--memory-limit", default=duck.DEFAULT_MEMORY_LIMIT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loadproof-bench-", dir=args.dir) as folder:
        work = Path(folder)
        suffix = "csv" if args.format == "azure_csv" else "jsonl"
        log = work / f"synthetic.{suffix}"
        started = time.perf_counter()
        child = multiprocessing.get_context("spawn").Process(target=generate, args=(log, args.rows, args.format))
        child.start()
        child.join()
        size_mib, seconds = log.stat().st_size / 2**20, time.perf_counter() - started
        print(f"generated {args.rows:,} rows ({size_mib:,.0f} MiB) in {seconds:.1f} s (child process)")

        from pipeline.workload.profile import profile_requests  # imported late: not part of the generator's RSS

        source = LogSource(path=str(log), format=args.format)
        rows, quarantine = work / "production_logs.parquet", work / "quarantine.parquet"
        started = time.perf_counter()
        stats = ingest(source, work, rows, quarantine, "bench", memory_limit=args.memory_limit)
        ingest_s = time.perf_counter() - started
        print(f"ingest: {stats.accepted:,} accepted, {stats.rejected:,} quarantined in {ingest_s:.1f} s")
        started = time.perf_counter()
        profile = profile_requests(rows, memory_limit=args.memory_limit)
        profile_s = time.perf_counter() - started
        summary = profile
        print(
            f"profile: {summary['requests']:,} requests, prompt p50/p99 {summary['prompt_tokens_p50']:.0f}/"
            f"{summary['prompt_tokens_p99']:.0f}, inter-arrival CV {summary['interarrival_cv']:.3f}, "
            f"index of dispersion {profile['dispersion'][0]['index_of_dispersion']:.2f} "
            f"at {profile['dispersion'][0]['bin_s']:g} s, in {profile_s:.1f} s"
        )
        print(
            f"TOTAL ingest + profile: {ingest_s + profile_s:.1f} s; peak RSS {peak_rss_mib():,.0f} MiB; DuckDB "
            f"memory_limit {args.memory_limit}"
        )
        from pipeline.spec.workload import Sample
        from pipeline.workload.sampling import draw_sample

        started = time.perf_counter()
        sample, window = draw_sample(rows, Sample(window_s=60, max_requests=1_000_000), memory_limit=args.memory_limit)
        print(
            f"busiest 60 s window: {sample.num_rows:,} requests from {window.as_dict()['window_start']} in "
            f"{time.perf_counter() - started:.1f} s; peak RSS {peak_rss_mib():,.0f} MiB"
        )


if __name__ == "__main__":
    main()
