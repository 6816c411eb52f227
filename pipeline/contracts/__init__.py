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

This package imports only pyarrow and the standard library: every stage imports it. The Arrow
schemas are in `schemas.py`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import pyarrow as pa

from pipeline.contracts.schemas import (  # noqa: F401  (re-exported: every stage imports them from here)
    ACCURACY_RESULTS_SCHEMA,
    CANONICAL_LOG_SCHEMA,
    COUNTED_BY_CLIENT,
    COUNTED_BY_SERVER,
    FIGURES_SCHEMA,
    FROM_SCHEDULE_COLUMNS,
    LABELLED_SLICE_SCHEMA,
    LOAD_LEVEL_COLUMNS,
    QUARANTINE_SCHEMA,
    RAW_TIMING_RECORD_SCHEMA,
    REPEAT_COLUMN,
    REPLAY_PLAN_SCHEMA,
    SERVER_METRICS_SCHEMA,
    SHARD_COLUMN,
    STREAM_KIND_COLUMNS,
    SWEEP_TIMINGS_SCHEMA,
)

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


# --- beside the pack document ----------------------------------------------------------------------

# `loadproof sign`'s Ed25519 signature of the folder's root (pipeline/pack/audit/signing.py), at the top
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
    optional=(
        "load_level",
        "retry_count",
        "labelled_item_id",
        *FROM_SCHEDULE_COLUMNS,
        "repeat",
        *COUNTED_BY_SERVER,
        *STREAM_KIND_COLUMNS,
        *COUNTED_BY_CLIENT,
    ),
)
SERVER_METRICS = PackFile(
    "server_metrics",
    "parquet",
    _PARTITION,
    "every /metrics (and GPU exporter) sample beside the production replay, each sweep level and arm",
    SERVER_METRICS_SCHEMA,
    optional=("endpoint", "load_level", "arm"),
)
REPLAY_SUMMARY = PackFile("replay_summary", "json", _PARTITION, "the replay's totals, per candidate and per shard")
ITL_HISTOGRAM = PackFile("itl_histogram", "parquet", _PARTITION, "every inter-token gap counted per whole microsecond")
SWEEP_TIMINGS = PackFile(
    "sweep_timings",
    "parquet",
    _PARTITION,
    "the plan replayed at each further load level (no rows without a sweep)",
    SWEEP_TIMINGS_SCHEMA,
    optional=(*FROM_SCHEDULE_COLUMNS, *COUNTED_BY_SERVER, *STREAM_KIND_COLUMNS, *COUNTED_BY_CLIENT),
)
ARM_TIMINGS = PackFile("arm_timings", "parquet", _PARTITION, "each arm's requests (pipeline/replay/conditions/arms.py)")
ARM_FIGURES = PackFile("arm_figures", "parquet", _PARTITION, "each arm's figures (pipeline/analysis/judge/arms.py)")
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
CAPACITY = PackFile(
    "capacity",
    "parquet",
    _PARTITION,
    "the capacity at the SLA: the bracket, what is served there (no rows without a sweep)",
)
TOKEN_AGREEMENT = PackFile(
    "token_agreement", "parquet", _PARTITION, "where the server's usage and the client's token count disagree"
)
PREFIX_CACHE_HITS = PackFile(
    "prefix_cache_hits", "parquet", _PARTITION, "the prefix-cache hit rate the server reported (steady window)"
)
SERVER_TIMINGS = PackFile(
    "server_timings",
    "parquet",
    _PARTITION,
    "per request kind, the client's TTFT and TPOT beside the server's own per-request timings, and the gap",
)
SERVER_TTFT = PackFile(
    "server_ttft", "parquet", _PARTITION, "the server's TTFT/E2E histogram percentiles beside the client's"
)
SERVER_LEVELS = PackFile("server_levels", "parquet", _PARTITION, "the server's queue and KV-cache use per load level")
GPU_ENERGY = PackFile("gpu_energy", "parquet", _PARTITION, "GPU utilisation, power and joules per output token")
FIGURES = PackFile(
    "figures",
    "parquet",
    _PARTITION,
    "every figure the pack shows: claim, measured, interval, n, method, verdict, lineage "
    "(analysis/judge/figures_table.py)",
    FIGURES_SCHEMA,
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
    ARM_TIMINGS,
    ARM_FIGURES,
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
    CAPACITY,
    TOKEN_AGREEMENT,
    PREFIX_CACHE_HITS,
    SERVER_TIMINGS,
    SERVER_TTFT,
    SERVER_LEVELS,
    GPU_ENERGY,
    FIGURES,
)
# what a partition's folder snapshots from the top one (PackLayout.sync_inputs_into)
SHARED_INPUTS = tuple(f for f in PACK_FILES if f.scope is Scope.SHARED and f.copied)
# what the side-by-side pack concatenates from each partition (pipeline.pack.assemble.gather)
PARTITION_TABLES = tuple(f for f in PACK_FILES if f.scope is Scope.PARTITION and f.format == "parquet")


def optional_columns(view: str) -> Mapping[str, str]:
    """The optional columns (name → DuckDB type) of the Parquet file a DuckDB view of that name reads."""
    for entry in PACK_FILES:
        if entry.name == view and entry.format == "parquet":
            return entry.optional_types
    return {}
