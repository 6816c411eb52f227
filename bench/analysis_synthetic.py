"""Synthetic raw timings at scale, in the raw-timings schema, for bench/analysis_10m.py.

    python bench/analysis_synthetic.py OUT.parquet --rows 10000000 [--itl-mean 100]

Two candidates replay the same plan (half the rows each) at `--rate` requests/s: Poisson
arrivals, log-normal prompt (median 300) and output lengths (median `--itl-mean`), TTFT and
inter-chunk gaps; 1 % typed errors, 2 % of requests retried once. Each successful request
carries its full ITL list (output tokens − 1 gaps), so 10 M rows hold about 1e9 gaps.
`chunk_offsets_ns` is left null: no analysis query reads it, and it would double the file.
Seeded: the same arguments write the same file.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA

CHUNK_ROWS = 500_000
CANDIDATES = ("alpha", "beta")
EPOCH = datetime(2026, 11, 29, tzinfo=UTC)


def chunk(
    rng: np.random.Generator, first: int, rows: int, candidate: str, rate: float, itl_mean: float, speed: float
) -> pa.Table:
    index = np.arange(first, first + rows)
    sent_s = np.cumsum(rng.exponential(1 / rate, rows)) + first / rate
    ok = rng.random(rows) >= 0.01
    prompt = np.clip(rng.lognormal(np.log(300), 0.9, rows), 1, 32_000).astype(np.int64)
    output = np.clip(rng.lognormal(np.log(itl_mean), 0.6, rows), 2, 4_000).astype(np.int64)
    ttft_ms = rng.lognormal(np.log(40 * speed), 0.8, rows) + prompt * 0.02 * speed
    gaps_per_row = np.where(ok, output - 1, 0)
    gaps = rng.lognormal(np.log(12 * speed), 0.25, int(gaps_per_row.sum()))
    offsets = np.concatenate([[0], np.cumsum(gaps_per_row)]).astype(np.int32)
    decode_ms = np.add.reduceat(gaps, offsets[:-1]) if gaps.size else np.zeros(rows)
    decode_ms = np.where(gaps_per_row > 0, decode_ms, 0.0)
    e2e_ms = ttft_ms + decode_ms
    sent_ns = (sent_s * 1e9).astype(np.int64)
    end_ns = sent_ns + (np.where(ok, e2e_ms, 5.0) * 1e6).astype(np.int64)
    first_token_ns = sent_ns + (ttft_ms * 1e6).astype(np.int64)
    mask = ~ok
    itl = pa.ListArray.from_arrays(pa.array(offsets), pa.array(gaps, pa.float64()), mask=pa.array(mask))
    error_type = np.where(ok, None, np.where(rng.random(rows) < 0.6, "http_5xx", "total_timeout"))
    ids = pc.binary_join_element_wise("req-", pc.cast(pa.array(index), pa.string()), "")
    columns = {
        "run_id": pa.array(["bench"] * rows),
        "candidate": pa.array([candidate] * rows),
        "request_id": ids,
        "scheduled_offset_s": pa.array(sent_s),
        "sent_at": pa.array((EPOCH.timestamp() * 1e6 + sent_s * 1e6).astype(np.int64), pa.timestamp("us", tz="UTC")),
        "schedule_lag_ms": pa.array(rng.exponential(0.3, rows)),
        "ttft_ms": pa.array(ttft_ms, mask=mask),
        "e2e_ms": pa.array(e2e_ms, mask=mask),
        "tpot_ms": pa.array(decode_ms / (output - 1), mask=mask),
        "itl_ms": itl,
        "prompt_tokens": pa.array(prompt),
        "output_tokens": pa.array(output, mask=mask),
        "prompt_tokens_client": pa.array(prompt),
        "output_tokens_client": pa.array(np.where(ok, output, 0)),
        "max_tokens": pa.array(output),
        "status": pa.array(np.where(ok, "ok", "error")),
        "error_type": pa.array(error_type, pa.string()),
        "error_message": pa.nulls(rows, pa.string()),
        "http_status": pa.array(np.where(ok, 200, np.where(error_type == "http_5xx", 503, 0))),
        "retry_count": pa.array((rng.random(rows) < 0.02).astype(np.int64)),
        "content_chunks": pa.array(np.where(ok, output, 0)),
        "usage_reported": pa.array(ok),
        "t_scheduled_ns": pa.array(sent_ns),
        "t_sent_ns": pa.array(sent_ns),
        "t_first_byte_ns": pa.array(sent_ns + 1000),
        "t_first_token_ns": pa.array(first_token_ns, mask=mask),
        "t_last_token_ns": pa.array(end_ns, mask=mask),
        "t_end_ns": pa.array(end_ns),
        "chunk_offsets_ns": pa.nulls(rows, pa.list_(pa.int64())),
    }
    for name in RAW_TIMING_RECORD_SCHEMA.names:  # columns the analysis never reads (usage_issue, ...) stay null
        columns.setdefault(name, pa.nulls(rows, RAW_TIMING_RECORD_SCHEMA.field(name).type))
    return pa.Table.from_pydict({name: columns[name] for name in RAW_TIMING_RECORD_SCHEMA.names}).cast(
        RAW_TIMING_RECORD_SCHEMA
    )


def generate(out: Path, rows: int, rate: float, itl_mean: float, seed: int = 0) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    per_candidate = rows // len(CANDIDATES)
    with pq.ParquetWriter(out, RAW_TIMING_RECORD_SCHEMA, compression="zstd") as writer:
        for number, candidate in enumerate(CANDIDATES):
            rng = np.random.default_rng(seed + number)  # the same plan, a different endpoint
            speed = 1.0 + 0.3 * number
            for first in range(0, per_candidate, CHUNK_ROWS):
                size = min(CHUNK_ROWS, per_candidate - first)
                writer.write_table(chunk(rng, first, size, candidate, rate, itl_mean, speed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rate", type=float, default=1000.0, help="requests/s per candidate")
    parser.add_argument("--itl-mean", type=float, default=100.0, help="median output tokens (gaps per request + 1)")
    args = parser.parse_args()
    started = time.perf_counter()
    generate(args.out, args.rows, args.rate, args.itl_mean)
    size = args.out.stat().st_size / 1e9
    print(f"wrote {args.rows:,} rows to {args.out} ({size:.2f} GB) in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
