"""The data contracts: every file a re-validation writes under a pack's `data/` folder, declared once.

Each entry says what the file is called (its stem, which is also the asset or table name where
there is one), its format, where it lives (`path`, relative to a pack folder), whether it is
shared by every candidate or written per candidate × model version, the Arrow columns its writer
builds where the code fixes them, and the optional columns a reader adds as typed NULLs for files
written before those columns existed.

Why one registry: the pack layout resolves an entry to its path, a partition copies the shared
entries, the side-by-side pack concatenates the partition tables, DuckDB views get an entry's
optional columns and the asset checks name what they read, all from the entries below; entries
are module constants, so a misspelt name fails at import, not as a missing file at run time.
Fixed column names must not be renamed (packs written before must still verify); add columns
freely. Every Parquet file also carries `run_id` (the assets append it when the rows lack it).

This module imports only pyarrow and the standard library: every stage imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import pyarrow as pa

DATA_DIR = "data"
RUN_ID = pa.field("run_id", pa.string())

Format = Literal["parquet", "json"]


class Scope(StrEnum):
    SHARED = "shared"  # one file for every candidate, at the pack folder's top
    # one per candidate × model version, under candidates/<candidate>/<version>/; the side-by-side
    # pack gathers every candidate's latest into the top folder
    PARTITION = "partition"


# DuckDB's name for each Arrow type an optional column may have
_DUCKDB_TYPES = {pa.float64(): "DOUBLE", pa.int64(): "BIGINT", pa.string(): "VARCHAR", pa.bool_(): "BOOLEAN"}


@dataclass(frozen=True)
class PackFile:
    name: str
    format: Format
    scope: Scope
    about: str
    # the columns the writer builds, in order, where the code fixes them (else the SQL that writes it does)
    schema: pa.Schema | None = None
    # columns a reader adds as typed NULLs when the file lacks them (written before they existed)
    optional: tuple[str, ...] = ()
    # a shared file is snapshotted into each partition's folder, so a partition's pack stands alone
    # and a later re-plan never changes a past version's evidence; the whole log is not (too large)
    copied: bool = True

    @property
    def path(self) -> str:
        """Relative to a pack folder (the top one, or a partition's), e.g. data/raw_timings.parquet."""
        return f"{DATA_DIR}/{self.name}.{self.format}"

    @property
    def file_schema(self) -> pa.Schema | None:
        """The columns of the file as written: the writer's, then `run_id` where they lack it."""
        if self.schema is None or RUN_ID.name in self.schema.names:
            return self.schema
        return self.schema.append(RUN_ID)

    @property
    def optional_types(self) -> Mapping[str, str]:
        """Each optional column with its DuckDB type (for `CAST(NULL AS …)`), from the schema."""
        if not self.optional:
            return {}
        assert self.schema is not None, f"{self.name}: optional columns are typed by its schema"
        return {name: _DUCKDB_TYPES[self.schema.field(name).type] for name in self.optional}


# --- the columns the code fixes ----------------------------------------------------------------

# the canonical request log (sql/ingest_accepted.sql writes these, then run_id)
CANONICAL_LOG_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),  # id from the log, else <file name>:<line>
        ("arrival_at", pa.timestamp("us", tz="UTC")),
        ("messages_json", pa.string()),  # chat messages as JSON when the log has text
        ("prompt_tokens", pa.int64()),  # logged prompt tokens
        ("output_tokens", pa.int64()),  # logged output tokens
        ("tenant", pa.string()),  # tenant (or the trace's log type)
        ("route", pa.string()),  # route (or the trace's model)
        ("logged_latency_ms", pa.float64()),  # latency the log recorded, when it did
        ("logged_ttft_ms", pa.float64()),  # time to first token the log recorded, when it did
        ("structured_output", pa.bool_()),  # JSON mode or tools requested; NULL when the log cannot tell
        # one hash per prefix block (hash_ids, or cumulative messages); NULL when unknown
        ("prefix_hashes", pa.list_(pa.uint64())),
        # session or conversation id when the log carries one (its turns: arrival order); else NULL
        ("session_id", pa.string()),
        ("source_file", pa.string()),  # file the line came from
        ("source_line", pa.int64()),  # 1-based line (or Parquet row) inside that file
    ]
)
# every line that did not parse (sql/ingest_quarantine.sql writes these, then run_id)
QUARANTINE_SCHEMA = pa.schema(
    [("source_file", pa.string()), ("source_line", pa.int64()), ("reason", pa.string()), ("raw", pa.string())]
)

REPLAY_PLAN_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),
        ("scheduled_offset_s", pa.float64()),
        ("messages_json", pa.string()),
        ("max_tokens", pa.int64()),
        ("min_tokens", pa.int64()),
        ("prompt_source", pa.string()),
        ("tokenizer", pa.string()),
        ("prompt_tokens_logged", pa.int64()),
        ("prompt_tokens_client", pa.int64()),
        ("prompt_tokens_error", pa.int64()),
        ("source_line", pa.int64()),
        # sessions (pipeline/plan/sessions.py): NULL for a request without one
        ("session_id", pa.string()),
        ("session_turn", pa.int64()),
        ("follows_request_id", pa.string()),  # sent after this request's reply + think_time_s
        ("think_time_s", pa.float64()),  # what the replay waits (trace: logged × time_scale)
        ("think_time_logged_s", pa.float64()),
        # accuracy mixed into the load (pipeline/plan/accuracy.py): the labelled item sent; NULL
        # for production requests
        ("labelled_item_id", pa.string()),
    ]
)

LABELLED_SLICE_SCHEMA = pa.schema(
    [
        ("item_id", pa.string()),
        ("text", pa.string()),
        ("label", pa.string()),
        ("messages_json", pa.string()),
        ("source_line", pa.int64()),
    ]
)

ACCURACY_RESULTS_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("item_id", pa.string()),
        ("label", pa.string()),
        ("reply", pa.string()),
        ("predicted", pa.string()),
        ("correct", pa.bool_()),
        ("status", pa.string()),
        ("error_type", pa.string()),
        ("http_status", pa.int64()),
        ("latency_ms", pa.float64()),
        ("prompt_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("sent_at", pa.timestamp("us", tz="UTC")),
    ]
)

# one record per replayed request (pipeline/replay/records.py builds it; the journal holds these rows)
RAW_TIMING_RECORD_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("candidate", pa.string()),
        ("request_id", pa.string()),
        ("scheduled_offset_s", pa.float64()),
        ("sent_at", pa.timestamp("us", tz="UTC")),
        ("schedule_lag_ms", pa.float64()),
        ("ttft_ms", pa.float64()),
        ("e2e_ms", pa.float64()),
        ("tpot_ms", pa.float64()),
        ("itl_ms", pa.list_(pa.float64())),
        ("prompt_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("prompt_tokens_client", pa.int64()),
        ("output_tokens_client", pa.int64()),
        ("max_tokens", pa.int64()),
        ("status", pa.string()),
        ("error_type", pa.string()),
        ("error_message", pa.string()),
        ("http_status", pa.int64()),
        ("retry_count", pa.int64()),
        ("content_chunks", pa.int64()),
        ("usage_reported", pa.bool_()),
        # usage_missing | usage_mismatch (the request still counts as ok; see replay/request.py)
        ("usage_issue", pa.string()),
        ("finish_reason", pa.string()),
        ("retry_after_s", pa.float64()),  # a 429's (or 503's) Retry-After, when given
        # lifecycle, monotonic ns (time.perf_counter_ns) on the replay's own clock
        ("t_scheduled_ns", pa.int64()),
        ("t_sent_ns", pa.int64()),
        ("t_first_byte_ns", pa.int64()),
        ("t_first_token_ns", pa.int64()),
        ("t_last_token_ns", pa.int64()),
        ("t_end_ns", pa.int64()),
        ("chunk_offsets_ns", pa.list_(pa.int64())),
        # every attempt when retries are on: [{error_type, http_status, sent_offset_ns, duration_ns}]
        ("attempts_json", pa.string()),
        # sessions (pipeline/replay/sessions.py); NULL for a request without one
        ("session_id", pa.string()),
        ("session_turn", pa.int64()),  # the turn's number in the logged session
        ("follows_request_id", pa.string()),  # sent after this request's end + think_time_s
        ("think_time_s", pa.float64()),
        ("session_history_turns", pa.int64()),  # earlier exchanges carried in the messages sent
        # accuracy mixed into the load: the labelled item a request carried, and its reply text
        # (kept for those requests only); NULL for every production request
        ("labelled_item_id", pa.string()),
        ("reply_text", pa.string()),
        # TTFT and E2E from the planned send time (t_scheduled_ns), not the actual one: a request
        # the client sent late keeps its wait (no coordinated omission); absent in older packs
        ("ttft_from_schedule_ms", pa.float64()),
        ("e2e_from_schedule_ms", pa.float64()),
        # when the send was called (before any pool wait or connection set-up; t_sent_ns is the
        # write that put the request on the socket), and the set-up of a connection opened for this
        # request (NULL when it reused one): transit kept out of the latency, recorded apart
        ("t_send_call_ns", pa.int64()),
        ("connect_ms", pa.float64()),
        # the prompt tokens the server's prefix cache held (usage.prompt_tokens_details.cached_tokens);
        # NULL where the server does not report it, and in files written before it was recorded
        ("cached_tokens", pa.int64()),
    ]
)
# read as NULL from files written before they existed
FROM_SCHEDULE_COLUMNS = ("ttft_from_schedule_ms", "e2e_from_schedule_ms")
# the load level every replayed row carries (the production level's in raw_timings)
LOAD_LEVEL_COLUMNS = [("load_level", pa.float64()), ("load_level_label", pa.string())]
SHARD_COLUMN = ("shard", pa.int64())  # the worker process (0-based) that sent the request
# which run of the production replay (0-based; `workload.replay.repeats`) sent the request: 0 in a
# replay done once, NULL in raw timings written before repeats
REPEAT_COLUMN = ("repeat", pa.int64())
SWEEP_TIMINGS_SCHEMA = pa.schema([*RAW_TIMING_RECORD_SCHEMA, *LOAD_LEVEL_COLUMNS])
# one row per sample of a /metrics scrape (pipeline/replay/server_metrics.py): when the scrape was
# sent (perf_counter_ns, raw_timings' clock), which scrape, the family, the sample's own name, its
# labels as sorted JSON and its value
SERVER_METRICS_SCHEMA = pa.schema(
    [
        ("t_ns", pa.int64()),
        ("scrape", pa.int64()),
        ("family", pa.string()),
        ("sample", pa.string()),
        ("labels_json", pa.string()),
        ("value", pa.float64()),
    ]
)


# --- beside the pack document ----------------------------------------------------------------------

# `loadproof sign`'s Ed25519 signature of the folder's root (pipeline/pack/signing.py), at the top
# of a pack folder beside evidence_pack.json: the one file there no manifest lists (it is written
# after the document whose sha256 it signs). Not a `data/` table, so not in PACK_FILES: it is never
# copied into a partition or gathered from one.
PACK_SIGNATURE = "signature.json"


# --- the files -----------------------------------------------------------------------------------

_SHARED, _PARTITION = Scope.SHARED, Scope.PARTITION

PRODUCTION_LOGS = PackFile(
    "production_logs", "parquet", _SHARED, "the canonical request log", CANONICAL_LOG_SCHEMA, copied=False
)
QUARANTINE = PackFile(
    "quarantine",
    "parquet",
    _SHARED,
    "every log line that did not parse, with the reason",
    QUARANTINE_SCHEMA,
    copied=False,
)
PRODUCTION_SAMPLE = PackFile("production_sample", "parquet", _SHARED, "the sampled requests (window or draw)")
PRODUCTION_SAMPLE_WINDOW = PackFile(
    "production_sample", "json", _SHARED, "the sample's window and its representativeness tests"
)
PROMPT_PROFILE = PackFile("prompt_profile", "parquet", _SHARED, "the sample's profile: one row of scalars")
PROMPT_PROFILE_DOCUMENT = PackFile(
    "prompt_profile", "json", _SHARED, "the whole profile: scalars, histograms, arrival rate, the log's own figures"
)
PROMPT_LENGTH_HISTOGRAM = PackFile(
    "prompt_length_histogram", "parquet", _SHARED, "prompt and output token lengths in power-of-two bins"
)
ARRIVAL_RATE = PackFile(
    "arrival_rate", "parquet", _SHARED, "requests per second over time, in bins from the first arrival"
)
CLAIM_DIVERGENCE = PackFile(
    "claim_divergence", "json", _SHARED, "the workload vs the claim's benchmark, and the proxy verdict"
)
LABELLED_SLICE = PackFile(
    "labelled_slice", "parquet", _SHARED, "the buyer's labelled items, prompts rendered", LABELLED_SLICE_SCHEMA
)
REPLAY_PLAN = PackFile("replay_plan", "parquet", _SHARED, "what to send and when", REPLAY_PLAN_SCHEMA)
CLIENT_CALIBRATION = PackFile(
    "client_calibration", "json", _SHARED, "the client's own schedule lag and TTFT floor at the plan's peak rate"
)

ENDPOINT_FINGERPRINT = PackFile(
    "endpoint_fingerprint", "json", _PARTITION, "models list, server headers, system_fingerprint, probe hashes"
)
RAW_TIMINGS = PackFile(
    "raw_timings",
    "parquet",
    _PARTITION,
    "one row per replayed request at the spec's own load: every lifecycle timestamp",
    pa.schema([*RAW_TIMING_RECORD_SCHEMA, SHARD_COLUMN, *LOAD_LEVEL_COLUMNS, REPEAT_COLUMN]),
    # columns the queries read that a replay may not write (load_level: only a load sweep has levels;
    # labelled_item_id: only accuracy mixed into the load), and files written before them
    optional=("load_level", "retry_count", "labelled_item_id", *FROM_SCHEDULE_COLUMNS, "repeat", "cached_tokens"),
)
SERVER_METRICS = PackFile(
    "server_metrics",
    "parquet",
    _PARTITION,
    "every sample of the candidate's Prometheus /metrics, scraped during the replay (no rows: none exposed)",
    SERVER_METRICS_SCHEMA,
)
REPLAY_SUMMARY = PackFile("replay_summary", "json", _PARTITION, "the replay's totals, per candidate and per shard")
ITL_HISTOGRAM = PackFile("itl_histogram", "parquet", _PARTITION, "every inter-token gap counted per whole microsecond")
SWEEP_TIMINGS = PackFile(
    "sweep_timings",
    "parquet",
    _PARTITION,
    "the plan replayed at each further load level (no rows without a sweep)",
    SWEEP_TIMINGS_SCHEMA,
    optional=(*FROM_SCHEDULE_COLUMNS, "cached_tokens"),
)
SWEEP_REPLAY = PackFile(
    "sweep_replay",
    "json",
    _PARTITION,
    "per candidate and level: replayed, reused or skipped, with its totals (absent without a sweep)",
)
ACCURACY_RESULTS = PackFile(
    "accuracy_results", "parquet", _PARTITION, "every slice item's reply, scored", ACCURACY_RESULTS_SCHEMA
)
ACCURACY_SUMMARY = PackFile("accuracy_summary", "parquet", _PARTITION, "accuracy with its Wilson interval")
ACCURACY_BY_LABEL = PackFile("accuracy_by_label", "parquet", _PARTITION, "per-label accuracy, confusion matrix")
LATENCY_PERCENTILES = PackFile(
    "latency_percentiles", "parquet", _PARTITION, "TTFT, TPOT, ITL, E2E percentiles with exact intervals"
)
THROUGHPUT = PackFile("throughput", "parquet", _PARTITION, "tokens/s, requests/s, goodput, error rate")
THROUGHPUT_BUCKETS = PackFile("throughput_buckets", "parquet", _PARTITION, "the replay in 1-second buckets")
ERROR_BREAKDOWN = PackFile("error_breakdown", "parquet", _PARTITION, "every planned request by outcome")
COST_PER_DECISION = PackFile(
    "cost_per_decision", "parquet", _PARTITION, "cost per useful decision and per million output tokens"
)
SWEEP_LEVELS = PackFile("sweep_levels", "parquet", _PARTITION, "per load level: the headline figures")
SWEEP_SUMMARY = PackFile(
    "sweep_summary", "parquet", _PARTITION, "the highest load level still meeting the SLA, its headroom"
)


# --- the registry --------------------------------------------------------------------------------

PACK_FILES: tuple[PackFile, ...] = (
    PRODUCTION_LOGS,
    QUARANTINE,
    PRODUCTION_SAMPLE,
    PRODUCTION_SAMPLE_WINDOW,
    PROMPT_PROFILE,
    PROMPT_PROFILE_DOCUMENT,
    PROMPT_LENGTH_HISTOGRAM,
    ARRIVAL_RATE,
    CLAIM_DIVERGENCE,
    LABELLED_SLICE,
    REPLAY_PLAN,
    CLIENT_CALIBRATION,
    ENDPOINT_FINGERPRINT,
    RAW_TIMINGS,
    SERVER_METRICS,
    REPLAY_SUMMARY,
    ITL_HISTOGRAM,
    SWEEP_TIMINGS,
    SWEEP_REPLAY,
    ACCURACY_RESULTS,
    ACCURACY_SUMMARY,
    ACCURACY_BY_LABEL,
    LATENCY_PERCENTILES,
    THROUGHPUT,
    THROUGHPUT_BUCKETS,
    ERROR_BREAKDOWN,
    COST_PER_DECISION,
    SWEEP_LEVELS,
    SWEEP_SUMMARY,
)
# what a partition's folder snapshots from the top one (PackLayout.sync_inputs_into)
SHARED_INPUTS = tuple(f for f in PACK_FILES if f.scope is Scope.SHARED and f.copied)
# what the side-by-side pack concatenates from each partition (pipeline.pack.gather)
PARTITION_TABLES = tuple(f for f in PACK_FILES if f.scope is Scope.PARTITION and f.format == "parquet")


def optional_columns(view: str) -> Mapping[str, str]:
    """The optional columns (name → DuckDB type) of the Parquet file a DuckDB view of that name reads."""
    for entry in PACK_FILES:
        if entry.name == view and entry.format == "parquet":
            return entry.optional_types
    return {}
