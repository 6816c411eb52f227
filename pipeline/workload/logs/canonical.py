"""The canonical request log and the quarantine table (ARCHITECTURE.md, "Data contracts").

sql/ingest_accepted.sql and sql/ingest_quarantine.sql write these columns (plus run_id);
`ingest_log` is the in-memory convenience for small logs and tests.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

CANONICAL_COLUMNS = {
    "request_id": "id from the log, else <file name>:<line>",
    "arrival_at": "arrival time, UTC",
    "messages_json": "chat messages as JSON when the log has text",
    "prompt_tokens": "logged prompt tokens",
    "output_tokens": "logged output tokens",
    "tenant": "tenant (or the trace's log type)",
    "route": "route (or the trace's model)",
    "logged_latency_ms": "latency the log recorded, when it did",
    "structured_output": "JSON mode or tools requested; NULL when the log cannot tell",
    "prefix_hashes": "one hash per prefix block (hash_ids, or cumulative messages); NULL when unknown",
    "session_id": "session or conversation id when the log carries one (its turns: arrival order); else NULL",
    "source_file": "file the line came from",
    "source_line": "1-based line (or Parquet row) inside that file",
}
QUARANTINE_COLUMNS = ("source_file", "source_line", "reason", "raw")


@dataclass
class IngestResult:
    rows: pa.Table
    rejects: pa.Table

    @property
    def reject_rate(self) -> float:
        total = self.rows.num_rows + self.rejects.num_rows
        return self.rejects.num_rows / total if total else 0.0

    def tables(self) -> tuple[pa.Table, pa.Table]:
        return self.rows, self.rejects


def ingest_log(path: str | Path, log_format: str, **source_fields) -> IngestResult:
    """Ingest one file or glob in memory (small logs, tests); the assets write Parquet directly."""
    from pipeline.spec.workload import LogSource
    from pipeline.workload.logs.ingest import ingest

    source = LogSource(path=str(path), format=log_format, **source_fields)
    with tempfile.TemporaryDirectory(prefix="loadproof-ingest-") as folder:
        rows_path, quarantine_path = Path(folder) / "rows.parquet", Path(folder) / "quarantine.parquet"
        ingest(source, Path.cwd(), rows_path, quarantine_path)
        rows, rejects = pq.read_table(rows_path), pq.read_table(quarantine_path)
    return IngestResult(rows.drop_columns(["run_id"]), rejects.drop_columns(["run_id"]))
