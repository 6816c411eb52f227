"""Production-log ingest with DuckDB: many files (globs, gzip) → canonical Parquet + quarantine.

Text formats are read line by line (sql/raw_log_lines.sql) so that every line, accepted or
quarantined, keeps its file and 1-based line number (sql/log_line_counts.sql, sql/log_lines.sql):
numbered as they are read, which makes the reader and every query after it run on one thread, or,
for a format whose fields query costs more per line than storing the line (`read_in_parallel`:
OTLP), read on every thread into a table whose rowid numbers them (DuckDB stores them in the
files' order); a format's *_fields query
maps the lines to named fields and sql/ingest_canonical.sql types and validates them. Bad lines
never stop the run: they are rows of the quarantine. A database source (litellm_spend_logs with
`dsn_env`, pipeline/workload/logs/database.py) becomes numbered lines of JSON the same way.

Privacy (`TextPrivacy`, the spec's `privacy`): under hash and drop the identifiers are salted or
dropped in SQL, the canonical log with its text is written to the private folder
(pipeline/privacy.py) and the pack's copy keeps the messages' structure only; the quarantine
keeps file, line and the reason's field name, never the line's text.
"""

from __future__ import annotations

import csv
import glob
import gzip
import io
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.duck import connect as duck
from pipeline.files.layout import PARQUET_COMPRESSION, PARQUET_ROW_GROUP_ROWS, settle
from pipeline.spec.workload import ColumnMapping, LogSource
from pipeline.workload.logs.database import EMPTY_REJECTS, read_spend_logs_table
from pipeline.workload.logs.formats import arrival_unit, columns_for, fields_query, labels_for, log_format, reads_csv

MAX_LINE_BYTES = 64 * 1024 * 1024
EPOCH = "1970-01-01 00:00:00+00"
MAPPED_FIELDS = (
    "request_id",
    "arrival",
    "prompt_tokens",
    "output_tokens",
    "tenant",
    "route",
    "latency_ms",
    "messages_json",
    "session_id",
    "completed_at",
    "first_token_at",
)


@dataclass(frozen=True)
class TextPrivacy:
    """What ingest keeps of the log's text: `policy` keep | hash | drop; `salt` for hash (never
    written); `text_path`: where the canonical log with its text goes (hash, drop)."""

    policy: str = "keep"
    salt: str = ""
    text_path: Path | None = None


class IngestError(ValueError):
    """The log cannot be read at all (no file, a header without a mapped column); names the file."""


class LogNotFound(IngestError, FileNotFoundError):
    """No file matches the spec's path or glob."""


@dataclass
class IngestStats:
    files: list[str] = field(default_factory=list)
    accepted: int = 0
    rejected: int = 0
    seconds: float = 0.0

    @property
    def reject_rate(self) -> float:
        total = self.accepted + self.rejected
        return self.rejected / total if total else 0.0

    def as_dict(self) -> dict:
        return {**asdict(self), "reject_rate": self.reject_rate}


def expand_paths(pattern: str, base_dir: Path) -> list[str]:
    """The files a spec's path or glob names, sorted; relative to the spec's folder."""
    full = pattern if os.path.isabs(pattern) else str(base_dir / pattern)
    files = sorted(p for p in glob.glob(full, recursive=True) if os.path.isfile(p))
    if not files:
        raise LogNotFound(f"production log not found: {full}")
    return files


def ingest(
    source: LogSource,
    base_dir: Path,
    rows_path: Path,
    quarantine_path: Path,
    run_id: str = "",
    memory_limit: str = duck.DEFAULT_MEMORY_LIMIT,
    privacy: TextPrivacy | None = None,
) -> IngestStats:
    """Ingest every file of `source` into canonical Parquet (arrival order) and a quarantine
    (`privacy`: what of the text is kept; default everything, as a keep spec does)."""
    started = time.perf_counter()
    privacy = privacy or TextPrivacy()
    keep = privacy.policy == "keep"
    assert keep or privacy.text_path is not None, "hash and drop write the text to the private folder"
    fmt = log_format(source.format)
    with duck.connection(memory_limit) as con:
        duck.run(con, "ingest_macros")  # what every format's *_fields query shares
        if source.dsn_env is not None:
            files = [read_spend_logs_table(con, source.dsn_env)]
            duck.run(con, "ingest_data_lines").create_view("data_lines")
        elif fmt.reader == "parquet":
            files = expand_paths(source.path or "", base_dir)
            _bind_parquet_rows(con, files, columns_for(source))
            con.from_arrow(_log_files(files, {})).to_table("log_files")
            con.from_arrow(EMPTY_REJECTS).to_table("line_rejects")
        else:
            files = expand_paths(source.path or "", base_dir)
            _bind_log_lines(con, files, fmt.read_in_parallel)
            if reads_csv(source):
                # a format's own export mapping names every column it can use; an export may have fewer
                optional = source.columns is None and fmt.reader != "csv"
                con.from_arrow(_csv_columns(files, columns_for(source), optional)).to_table("csv_columns")
            else:
                duck.run(con, "ingest_data_lines").create_view("data_lines")
        kind, unit_us = arrival_unit(source)
        # materialised: as a view, DuckDB inlines the field expressions into every use (5× slower)
        duck.run(
            con, fields_query(source), {"arrival_kind": kind, "database_rows": source.dsn_env is not None}
        ).to_table("format_fields")
        duck.run(con, "ingest_log_fields").create_view("log_fields")  # every format's fields in one shape
        arrival_field, prompt_field, output_field, latency_field, completed_field, first_token_field = labels_for(
            source
        )
        params = {
            "timezone": source.timezone,
            "origin": source.origin.isoformat() if source.origin else EPOCH,
            "unit_us": unit_us,
            "arrival_field": arrival_field,
            "prompt_field": prompt_field,
            "output_field": output_field,
            "latency_field": latency_field,
            "completed_field": completed_field,
            "first_token_field": first_token_field,
            "echo_values": keep,
        }
        duck.run(con, "ingest_canonical", params).to_table("canonical")
        if fmt.records_share_lines:
            duck.run(con, "ingest_reject_lines")
        accepted = duck.run(
            con, "ingest_accepted", {"run_id": run_id, "text_policy": privacy.policy, "salt": privacy.salt}
        )
        if keep:
            _write(accepted, rows_path)
        else:
            assert privacy.text_path is not None
            _write(accepted, privacy.text_path)
            con.read_parquet(str(privacy.text_path)).create_view("accepted_rows")
            _write(duck.run(con, "ingest_withheld"), rows_path)
        _write(duck.run(con, "ingest_quarantine", {"run_id": run_id, "echo_values": keep}), quarantine_path)
        accepted, rejected = duck.run(con, "ingest_counts").fetchall()[0]
    return IngestStats(files=files, accepted=accepted, rejected=rejected, seconds=time.perf_counter() - started)


def _bind_log_lines(con: duckdb.DuckDBPyConnection, files: list[str], in_parallel: bool) -> None:
    """The raw lines (`raw_lines`: numbered as read, on one thread; or, `in_parallel`, read on every
    thread into the table stored_lines, whose rowid numbers them), then the lines per file, the
    reader's own rejects and the numbered lines view. Both readers are macros of sql/raw_log_lines.sql."""
    duck.run(con, "raw_log_lines")
    params = {"files": files, "max_line_size": MAX_LINE_BYTES}
    if in_parallel:
        duck.run(con, "stored_log_lines", params).to_table("stored_lines")
        duck.run(con, "raw_lines_stored").create_view("raw_lines")
    else:
        duck.run(con, "raw_lines_streamed", params).create_view("raw_lines")
    counts = duck.run(con, "log_line_counts").to_arrow_table().to_pylist()
    con.from_arrow(_log_files(files, {row["file_id"]: row["first_index"] for row in counts})).to_table("log_files")
    duck.run(con, "line_rejects").to_table("line_rejects")
    rejected = duck.run(con, "line_reject_count").fetchall()[0][0]
    duck.run(con, "log_lines_around_rejects" if rejected else "log_lines").create_view("log_lines")


def _log_files(files: list[str], first_index: dict[int, int]) -> pa.Table:
    """file_id (position in the sorted list), file name, and the running line number of its first line."""
    return pa.table(
        {
            "file_id": pa.array(range(len(files)), pa.int64()),
            "source_file": pa.array(files, pa.string()),
            "first_index": pa.array([first_index.get(file_id) for file_id in range(len(files))], pa.int64()),
        }
    )


def _csv_columns(files: list[str], columns: ColumnMapping | None, optional: bool = False) -> pa.Table:
    """Per file: the header's line number and width, and the 1-based position of each mapped field
    (with `optional`, a mapped column the header lacks reads NULL, except the three required)."""
    assert columns is not None
    rows = []
    for file_id, path in enumerate(files):
        line_number, header = _read_header(path)
        row: dict[str, int | None] = {"file_id": file_id, "header_line": line_number, "header_width": len(header)}
        for name in MAPPED_FIELDS:
            wanted = getattr(columns, name)
            if optional and wanted not in header and name not in ("arrival", "prompt_tokens", "output_tokens"):
                wanted = None
            if wanted is not None and wanted not in header:
                raise IngestError(
                    f"{path}:{line_number}: header has no column {wanted!r} (mapped to {name}); columns: {header}"
                )
            row[f"{name}_pos"] = header.index(wanted) + 1 if wanted is not None else None
        rows.append(row)
    schema = pa.schema(
        [("file_id", pa.int64()), ("header_line", pa.int64()), ("header_width", pa.int64())]
        + [(f"{name}_pos", pa.int64()) for name in MAPPED_FIELDS]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def _read_header(path: str) -> tuple[int, list[str]]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", errors="replace", newline="") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                return number, [name.strip() for name in next(csv.reader(io.StringIO(line)))]
    raise IngestError(f"{path}: empty file, no CSV header")


def _bind_parquet_rows(con: duckdb.DuckDBPyConnection, files: list[str], columns: ColumnMapping | None) -> None:
    """Parquet rows under the canonical field names (mapping applied, every value as text)."""
    assert columns is not None
    relation = con.read_parquet(files, filename=True, file_row_number=True, union_by_name=True)
    available = relation.columns
    selected = [
        duckdb.ColumnExpression("filename").alias("source_file"),
        (duckdb.ColumnExpression("file_row_number") + duckdb.ConstantExpression(1)).alias("source_line"),
    ]
    for name in MAPPED_FIELDS:
        wanted = getattr(columns, name)
        if wanted is not None and wanted not in available:
            raise IngestError(f"{files[0]}: Parquet has no column {wanted!r} (mapped to {name}); columns: {available}")
        expression = duckdb.ColumnExpression(wanted) if wanted is not None else duckdb.ConstantExpression(None)
        selected.append(expression.cast(duckdb.sqltype("VARCHAR")).alias(f"{name}_text"))
    relation.select(*selected).create_view("parquet_rows")


def _write(relation: duckdb.DuckDBPyRelation, path: Path) -> None:
    """Write atomically, as pipeline.files.layout.write_parquet does, with its compression and
    row-group size (DuckDB's writer keeps the relation's row order: preserve_insertion_order)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    relation.write_parquet(str(partial), compression=PARQUET_COMPRESSION, row_group_size=PARQUET_ROW_GROUP_ROWS)
    settle(partial, path)  # the same rows ingested again by a later run: the file as it was
