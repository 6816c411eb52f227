"""Benchmark: ingest a 10-million-request log in one of the vendor formats; prints seconds and peak RSS.

    .venv/bin/python bench/ingest_formats_10m.py --format otel_genai|litellm_spend_logs|langfuse|bedrock_invocations
        [--rows 10000000] [--dir /tmp/loadproof-bench] [--memory-limit 2GB] [--profile] [--log PATH]

bench/sql/bench_synthetic_<format>.sql writes the log with DuckDB, in a child process (its memory
is not counted): Poisson-like arrivals at ~2,800 requests/s, log-normal lengths, latency and TTFT
derived from them, the records that are not requests (OTLP HTTP spans, LiteLLM embedding rows,
Langfuse SPANs) mixed in, a cut line every ~million lines. `--rows` counts requests (for
otel_genai: chat spans, four to a line). The figure is ingest (log → canonical Parquet +
quarantine) on its own, as the target (≤ 60 s, ≤ 4 GiB on 2 cores) states it; `--profile` also
times the profile of the whole log (logged latency → production concurrency). Peak RSS is this
process's maximum resident set (ru_maxrss), DuckDB's buffers included. `--log PATH` keeps the
generated log there (generated only when the file is absent), so that two checkouts can ingest the
same log back to back (`PYTHONPATH=<checkout> python bench/ingest_formats_10m.py --log ...` times that
checkout's ingest).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))  # after PYTHONPATH: PYTHONPATH=<checkout> times that checkout's ingest

from pipeline.duck import connect as duck  # noqa: E402
from pipeline.duck.catalog import QueryCatalog  # noqa: E402
from pipeline.spec.workload import LogSource  # noqa: E402
from pipeline.workload.logs.ingest import ingest  # noqa: E402

SEED = 20231116
BENCH_QUERIES = QueryCatalog((REPO / "bench" / "sql",))
FORMATS = ("otel_genai", "litellm_spend_logs", "langfuse", "bedrock_invocations")


def generate(path: Path, rows: int, log_format: str) -> None:
    # the generator's memory is not the benchmark's: otel_genai groups 10 M spans into lines
    with duck.connection("8GB") as con:
        duck.run(con, "bench_synthetic_requests", queries=BENCH_QUERIES)  # the stream the formats share
        relation = duck.run(con, f"bench_synthetic_{log_format}", {"rows": rows, "seed": SEED / 1e8}, BENCH_QUERIES)
        relation.write_csv(str(path), header=False, quotechar="", sep="\t")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary one)")
    parser.add_argument("--memory-limit", default=duck.DEFAULT_MEMORY_LIMIT)
    parser.add_argument("--profile", action="store_true", help="also time the profile of the whole log")
    parser.add_argument("--log", default=None, help="keep the log here; reuse it when it exists (not deleted)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loadproof-bench-", dir=args.dir) as folder:
        work = Path(folder)
        log = Path(args.log) if args.log else work / f"synthetic_{args.format}.jsonl"
        if log.exists():
            print(f"reusing {log} ({log.stat().st_size / 2**20:,.0f} MiB; --rows and the generator not applied)")
        else:
            started = time.perf_counter()
            child = multiprocessing.get_context("spawn").Process(target=generate, args=(log, args.rows, args.format))
            child.start()
            child.join()
            seconds = time.perf_counter() - started
            print(f"generated {args.rows:,} requests ({log.stat().st_size / 2**20:,.0f} MiB) in {seconds:.1f} s")
        size_mib = log.stat().st_size / 2**20
        print(f"load average before ingest: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        rows, quarantine = work / "production_logs.parquet", work / "quarantine.parquet"
        started = time.perf_counter()
        stats = ingest(LogSource(path=str(log), format=args.format), work, rows, quarantine, "bench", args.memory_limit)
        ingest_s = time.perf_counter() - started
        print(
            f"ingest {args.format}: {stats.accepted:,} accepted, {stats.rejected:,} quarantined in {ingest_s:.1f} s "
            f"({size_mib / ingest_s:,.0f} MiB/s); peak RSS {peak_rss_mib():,.0f} MiB; DuckDB memory_limit "
            f"{args.memory_limit}; load average after {os.getloadavg()[0]:.2f}"
        )
        if args.profile:
            from pipeline.workload.profile import profile_requests

            started = time.perf_counter()
            profile = profile_requests(rows, memory_limit=args.memory_limit)
            print(
                f"profile: {profile['requests']:,} requests, {profile['requests_with_latency']:,} with a logged "
                f"latency (mean {profile['latency_mean_ms']:.0f} ms), logged concurrency peak "
                f"{profile['concurrency_peak_logged']}, Little's law {profile['concurrency_littles_law']:.1f}, in "
                f"{time.perf_counter() - started:.1f} s; peak RSS {peak_rss_mib():,.0f} MiB"
            )


if __name__ == "__main__":
    main()
