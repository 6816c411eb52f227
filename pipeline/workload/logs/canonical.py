"""The canonical request log and the quarantine table, in memory (ARCHITECTURE.md, "Data contracts").

sql/ingest_accepted.sql and sql/ingest_quarantine.sql write their columns (plus run_id), declared
in pipeline/contracts/ (`PRODUCTION_LOGS`, `QUARANTINE`); `ingest_log` is the in-memory
convenience for small logs and tests.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


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
