"""The canonical request log and the quarantine table (DESIGN.md "Data contracts")."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

CANONICAL_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),
        ("arrival_at", pa.timestamp("us", tz="UTC")),
        ("messages_json", pa.string()),
        ("prompt_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("tenant", pa.string()),
        ("route", pa.string()),
        ("logged_latency_ms", pa.float64()),
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
    ]
)

QUARANTINE_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("reason", pa.string()),
        ("raw", pa.string()),
    ]
)

RAW_EXCERPT_CHARS = 300


@dataclass
class IngestResult:
    rows: list[dict] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)

    def reject(self, source: Path, line_number: int, reason: str, raw: str) -> None:
        self.rejects.append(
            {
                "source_file": str(source),
                "source_line": line_number,
                "reason": reason,
                "raw": raw[:RAW_EXCERPT_CHARS],
            }
        )

    @property
    def reject_rate(self) -> float:
        total = len(self.rows) + len(self.rejects)
        return len(self.rejects) / total if total else 0.0

    def tables(self) -> tuple[pa.Table, pa.Table]:
        rows = sorted(self.rows, key=lambda row: (row["arrival_at"], row["source_line"]))
        return (
            pa.Table.from_pylist(rows, schema=CANONICAL_SCHEMA),
            pa.Table.from_pylist(self.rejects, schema=QUARANTINE_SCHEMA),
        )


def ingest_log(path: Path, log_format: str) -> IngestResult:
    """Parse one log file; bad lines go to the quarantine, never stop the run."""
    from pipeline.logs import openai_jsonl

    parsers = {"openai_jsonl": openai_jsonl.parse}
    if log_format not in parsers:
        raise ValueError(f"unknown log format {log_format!r}; known: {sorted(parsers)}")
    if not path.is_file():
        raise FileNotFoundError(f"production log not found: {path}")
    return parsers[log_format](path)
