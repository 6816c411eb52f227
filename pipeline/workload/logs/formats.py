"""The log formats ingest knows: how each is read and which source field is which.

Every text format is read line by line (so every quarantined line has its number) and turned
into the same `log_fields` columns by sql/ingest_<kind>_fields.sql; sql/ingest_canonical.sql
then types and validates them for every format alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipeline.spec.workload import ColumnMapping, LogSource

UNIT_US = {"s": 1e6, "ms": 1e3, "us": 1.0, "timestamp": 1.0}


@dataclass(frozen=True)
class LogFormat:
    name: str
    reader: Literal["csv", "jsonl", "parquet"]
    fields_sql: str
    default_columns: ColumnMapping | None = None
    number_unit: str = "s"  # unit of numeric arrival times when the format fixes it
    labels: tuple[str, str, str, str] = ("arrival", "prompt_tokens", "output_tokens", "latency_ms")


AZURE_COLUMNS = ColumnMapping(arrival="TIMESTAMP", prompt_tokens="ContextTokens", output_tokens="GeneratedTokens")
BURSTGPT_COLUMNS = ColumnMapping(
    arrival="Timestamp",
    arrival_unit="s",
    prompt_tokens="Request tokens",
    output_tokens="Response tokens",
    tenant="Log Type",
    route="Model",
)

FORMATS = {
    "openai_jsonl": LogFormat(
        "openai_jsonl",
        "jsonl",
        "ingest_openai_jsonl_fields",
        labels=("timestamp", "response.usage.prompt_tokens", "response.usage.completion_tokens", "latency_ms"),
    ),
    "mooncake_jsonl": LogFormat(
        "mooncake_jsonl",
        "jsonl",
        "ingest_mooncake_jsonl_fields",
        number_unit="ms",
        labels=("timestamp", "input_length", "output_length", "latency_ms"),
    ),
    "azure_csv": LogFormat("azure_csv", "csv", "ingest_csv_fields", AZURE_COLUMNS),
    "burstgpt_csv": LogFormat("burstgpt_csv", "csv", "ingest_csv_fields", BURSTGPT_COLUMNS),
    "csv": LogFormat("csv", "csv", "ingest_csv_fields"),
    "parquet": LogFormat("parquet", "parquet", "ingest_parquet_fields"),
}


def log_format(name: str) -> LogFormat:
    if name not in FORMATS:
        raise ValueError(f"unknown log format {name!r}; known: {sorted(FORMATS)}")
    return FORMATS[name]


def columns_for(source: LogSource) -> ColumnMapping | None:
    """The spec's column mapping, else the format's own."""
    return source.columns or log_format(source.format).default_columns


def labels_for(source: LogSource) -> tuple[str, str, str, str]:
    """Source field names that rejection reasons name."""
    columns = columns_for(source)
    if columns is None:
        return log_format(source.format).labels
    return (columns.arrival, columns.prompt_tokens, columns.output_tokens, columns.latency_ms or "latency_ms")


def arrival_unit(source: LogSource) -> tuple[str, float]:
    """('timestamp' | 'number', microseconds per number) for this source."""
    columns = columns_for(source)
    if columns is None:
        return "number", UNIT_US[log_format(source.format).number_unit]
    kind = "timestamp" if columns.arrival_unit == "timestamp" else "number"
    return kind, UNIT_US[columns.arrival_unit]
