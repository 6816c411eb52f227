"""Hand-built canonical request logs (the columns sql/ingest_accepted.sql writes) for tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

from pipeline.files.layout import write_parquet

T0 = datetime(2026, 11, 2, 14, 0, tzinfo=UTC)


def canonical_table(offsets_s: list[float], **columns) -> pa.Table:
    """One row per offset (seconds after T0); other columns default to simple values."""
    n = len(offsets_s)
    data = {
        "request_id": [f"r{i}" for i in range(n)],
        "arrival_at": pa.array([T0 + timedelta(seconds=t) for t in offsets_s], pa.timestamp("us", tz="UTC")),
        "messages_json": pa.array([None] * n, pa.string()),
        "prompt_tokens": [100] * n,
        "output_tokens": [10] * n,
        "tenant": pa.array([None] * n, pa.string()),
        "route": pa.array([None] * n, pa.string()),
        "logged_latency_ms": pa.array([None] * n, pa.float64()),
        "logged_ttft_ms": pa.array([None] * n, pa.float64()),
        "structured_output": pa.array([None] * n, pa.bool_()),
        "request_fields": pa.array([None] * n, pa.string()),
        "prefix_hashes": pa.array([None] * n, pa.list_(pa.uint64())),
        "session_id": pa.array([None] * n, pa.string()),
        "source_file": ["log.jsonl"] * n,
        "source_line": list(range(1, n + 1)),
    }
    for name, values in columns.items():
        data[name] = pa.array(values, data[name].type) if isinstance(data[name], pa.Array) else values
    return pa.table(data)


def write_canonical(path: Path, offsets_s: list[float], **columns) -> Path:
    return write_parquet(canonical_table(offsets_s, **columns), path)
