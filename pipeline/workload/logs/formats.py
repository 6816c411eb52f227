"""The log formats ingest knows: how each is read and which source field is which.

Every text format is read line by line (so every quarantined line has its number) and turned
into the same `log_fields` columns by sql/ingest_<kind>_fields.sql; sql/ingest_canonical.sql
then types and validates them for every format alike. Formats whose log holds other records too
(OTLP spans that are not model calls, Langfuse spans and events, LiteLLM embedding rows) keep
only the requests: the rest is neither a row nor a reject.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipeline.spec.workload import ColumnMapping, LogSource

UNIT_US = {"s": 1e6, "ms": 1e3, "us": 1.0, "timestamp": 1.0}
Labels = tuple[str, str, str, str, str, str]  # arrival, prompt, output, latency, completed, first token


@dataclass(frozen=True)
class LogFormat:
    name: str
    reader: Literal["csv", "jsonl", "parquet"]
    fields_sql: str
    default_columns: ColumnMapping | None = None
    number_unit: str = "s"  # unit of numeric arrival times when the format fixes it
    labels: Labels = ("arrival", "prompt_tokens", "output_tokens", "latency_ms", "completed_at", "first_token_at")
    csv_columns: ColumnMapping | None = None  # the mapping of the format's CSV export, when it has one
    # read on every thread into a stored table (its rowid numbers the lines) instead of numbered as
    # read on one: pays where the fields query costs far more per line than storing the line (OTLP's
    # nested parse: 2× faster at 10 M spans); a 10 M-row LiteLLM log spilled its stored lines and
    # took 1.5× as long (bench/CHANGELOG.md, "Line numbers read in parallel")
    read_in_parallel: bool = False
    # a line holds many records (OTLP spans): the fields query leaves a good line's text out of its
    # records' rows, and ingest gives a rejected record its line's start afterwards (ingest_reject_lines)
    records_share_lines: bool = False


AZURE_COLUMNS = ColumnMapping(arrival="TIMESTAMP", prompt_tokens="ContextTokens", output_tokens="GeneratedTokens")
BURSTGPT_COLUMNS = ColumnMapping(
    arrival="Timestamp",
    arrival_unit="s",
    prompt_tokens="Request tokens",
    output_tokens="Response tokens",
    tenant="Log Type",
    route="Model",
)

# LiteLLM_SpendLogs' columns (schema.prisma), as the table, its CSV export and /spend/logs name them
LITELLM_COLUMNS = ColumnMapping(
    arrival="startTime",
    prompt_tokens="prompt_tokens",
    output_tokens="completion_tokens",
    request_id="request_id",
    tenant="team_id",
    route="model_group",
    messages_json="messages",
    session_id="session_id",
    completed_at="endTime",
    first_token_at="completionStartTime",
)

FORMATS = {
    "openai_jsonl": LogFormat(
        "openai_jsonl",
        "jsonl",
        "ingest_openai_jsonl_fields",
        labels=(
            "timestamp",
            "response.usage.prompt_tokens",
            "response.usage.completion_tokens",
            "latency_ms",
            "completed_at",
            "first_token_at",
        ),
    ),
    "mooncake_jsonl": LogFormat(
        "mooncake_jsonl",
        "jsonl",
        "ingest_block_trace_fields",
        number_unit="ms",
        labels=("timestamp", "input_length", "output_length", "latency_ms", "completed_at", "first_token_at"),
    ),
    "loadproof_trace_jsonl": LogFormat(
        "loadproof_trace_jsonl",
        "jsonl",
        "ingest_block_trace_fields",
        number_unit="ms",
        labels=("timestamp", "input_length", "output_length", "latency_ms", "completed_at", "ttft_ms"),
    ),
    "azure_csv": LogFormat("azure_csv", "csv", "ingest_csv_fields", AZURE_COLUMNS),
    "burstgpt_csv": LogFormat("burstgpt_csv", "csv", "ingest_csv_fields", BURSTGPT_COLUMNS),
    "csv": LogFormat("csv", "csv", "ingest_csv_fields"),
    "parquet": LogFormat("parquet", "parquet", "ingest_parquet_fields"),
    "otel_genai": LogFormat(
        "otel_genai",
        "jsonl",
        "ingest_otel_genai_fields",
        number_unit="us",  # the query turns startTimeUnixNano into microseconds (a double keeps them exact)
        read_in_parallel=True,
        records_share_lines=True,
        labels=(
            "startTimeUnixNano",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "latency_ms",
            "endTimeUnixNano",
            "first_token_at",
        ),
    ),
    "litellm_spend_logs": LogFormat(
        "litellm_spend_logs",
        "jsonl",
        "ingest_litellm_spend_logs_fields",
        labels=("startTime", "prompt_tokens", "completion_tokens", "latency_ms", "endTime", "completionStartTime"),
        csv_columns=LITELLM_COLUMNS,
    ),
    "langfuse": LogFormat(
        "langfuse",
        "jsonl",
        "ingest_langfuse_fields",
        labels=(
            "startTime",
            "usageDetails.input",
            "usageDetails.output",
            "latency_ms",
            "endTime",
            "completionStartTime",
        ),
    ),
    "bedrock_invocations": LogFormat(
        "bedrock_invocations",
        "jsonl",
        "ingest_bedrock_invocations_fields",
        labels=(
            "timestamp",
            "input.inputTokenCount",
            "output.outputTokenCount",
            "output.outputBodyJson.metrics.latencyMs",
            "completed_at",
            "first_token_at",
        ),
    ),
}

CSV_SUFFIXES = (".csv", ".csv.gz")


def log_format(name: str) -> LogFormat:
    if name not in FORMATS:
        raise ValueError(f"unknown log format {name!r}; known: {sorted(FORMATS)}")
    return FORMATS[name]


def reads_csv(source: LogSource) -> bool:
    """Whether this source is read as CSV: a CSV format, or a format's CSV export (by file name)."""
    fmt = log_format(source.format)
    if fmt.reader == "csv":
        return True
    return fmt.csv_columns is not None and source.path is not None and source.path.endswith(CSV_SUFFIXES)


def fields_query(source: LogSource) -> str:
    return "ingest_csv_fields" if reads_csv(source) else log_format(source.format).fields_sql


def columns_for(source: LogSource) -> ColumnMapping | None:
    """The spec's column mapping, else the format's own (its CSV export's when read as CSV)."""
    fmt = log_format(source.format)
    if source.columns is not None:
        return source.columns
    return fmt.csv_columns if reads_csv(source) and fmt.reader != "csv" else fmt.default_columns


def labels_for(source: LogSource) -> Labels:
    """Source field names that rejection reasons name."""
    columns = columns_for(source)
    if columns is None:
        return log_format(source.format).labels
    return (
        columns.arrival,
        columns.prompt_tokens,
        columns.output_tokens,
        columns.latency_ms or "latency_ms",
        columns.completed_at or "completed_at",
        columns.first_token_at or "first_token_at",
    )


def arrival_unit(source: LogSource) -> tuple[str, float]:
    """('timestamp' | 'number', microseconds per number) for this source."""
    columns = columns_for(source)
    if columns is None:
        return "number", UNIT_US[log_format(source.format).number_unit]
    kind = "timestamp" if columns.arrival_unit == "timestamp" else "number"
    return kind, UNIT_US[columns.arrival_unit]
