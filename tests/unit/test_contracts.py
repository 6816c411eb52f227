"""The data-contracts registry: the paths packs were written with, what a partition copies, what
the comparison gathers, and each declared schema against what its real writer writes."""

import hashlib
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dagster import AssetChecksDefinition

from assets import ASSET_MODULES
from assets.support.metadata import table_metadata, with_run_id
from pipeline import REPO_ROOT, contracts
from pipeline.accuracy.labelled_slice import load_slice, score_replies
from pipeline.contracts import (
    ACCURACY_RESULTS,
    LABELLED_SLICE,
    PARTITION_TABLES,
    PRODUCTION_LOGS,
    QUARANTINE,
    RAW_TIMINGS,
    REPLAY_PLAN,
    SHARED_INPUTS,
    SWEEP_TIMINGS,
    PackFile,
    Scope,
)
from pipeline.contracts.columns import BY_TABLE, column_description
from pipeline.duck.session import QuerySession
from pipeline.files.layout import PackLayout
from pipeline.plan.replay_plan import build_plan
from pipeline.replay.conditions.sweep import load_levels, production_level, with_load_level
from pipeline.replay.production.repeats import with_repeat_column
from pipeline.replay.production.shards import Shard, with_shard_column
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.spec import Spec
from pipeline.spec.accuracy import AccuracySlice
from pipeline.spec.workload import LogSource
from pipeline.workload.logs.ingest import ingest
from pipeline.workload.sampling import draw_sample
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import DEMO_LOG, DEMO_SLICE, demo_spec_dict

# every data file a pack has held: a pack written before must still verify, so none may move
SNAPSHOTTED = {  # shared by every candidate, and copied into each partition's folder
    "data/production_sample.parquet",
    "data/production_sample.json",
    "data/prompt_profile.parquet",
    "data/prompt_profile.json",
    "data/prompt_length_histogram.parquet",
    "data/arrival_rate.parquet",
    "data/claim_divergence.json",
    "data/labelled_slice.parquet",
    "data/replay_plan.parquet",
    "data/client_calibration.json",
}
WHOLE_LOG = {"data/production_logs.parquet", "data/quarantine.parquet"}  # shared, too large to copy
PER_PARTITION = {
    "data/endpoint_fingerprint.json",
    "data/replay_summary.json",
    "data/sweep_replay.json",
    "data/raw_timings.parquet",
    "data/server_metrics.parquet",
    "data/itl_histogram.parquet",
    "data/sweep_timings.parquet",
    "data/arm_timings.parquet",
    "data/arm_figures.parquet",
    "data/accuracy_results.parquet",
    "data/accuracy_summary.parquet",
    "data/accuracy_by_label.parquet",
    "data/latency_percentiles.parquet",
    "data/throughput.parquet",
    "data/throughput_buckets.parquet",
    "data/error_breakdown.parquet",
    "data/cost_per_decision.parquet",
    "data/sweep_levels.parquet",
    "data/sweep_summary.parquet",
    "data/capacity.parquet",
    "data/token_agreement.parquet",
    "data/prefix_cache_hits.parquet",
    "data/server_timings.parquet",
    "data/server_ttft.parquet",
    "data/server_levels.parquet",
    "data/gpu_energy.parquet",
    "data/figures.parquet",
}


def columns(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    """Names and types in order (nullability and metadata are the writer's business)."""
    return [(field.name, field.type) for field in schema]


def test_every_pack_file_is_declared_once_at_the_path_packs_were_written_with():
    assert {f.path for f in contracts.PACK_FILES} == SNAPSHOTTED | WHOLE_LOG | PER_PARTITION
    assert len(contracts.PACK_FILES) == len(SNAPSHOTTED | WHOLE_LOG | PER_PARTITION)
    assert {f.path for f in contracts.PACK_FILES if f.scope is Scope.PARTITION} == PER_PARTITION
    module_constants = {v for v in vars(contracts).values() if isinstance(v, PackFile)}
    assert module_constants == set(contracts.PACK_FILES)  # no entry left out of the registry
    assert PackLayout(Path("/pack")).path(RAW_TIMINGS) == Path("/pack/data/raw_timings.parquet")


def test_an_undeclared_name_fails_at_import():
    with pytest.raises(ImportError):
        exec("from pipeline.contracts import RAW_TIMING")
    with pytest.raises(AttributeError):
        PackLayout(Path("/pack")).table("raw_timings")  # files are reached only through the registry


def test_contracts_imports_no_other_pipeline_module():  # its own schemas module only
    code = "import sys, pipeline.contracts; print(sorted(m for m in sys.modules if m.startswith('pipeline')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    assert loaded.stdout.strip() == "['pipeline', 'pipeline.contracts', 'pipeline.contracts.schemas']"


def test_a_partition_copies_exactly_the_shared_inputs(tmp_path: Path):
    top = PackLayout(tmp_path)
    for file in contracts.PACK_FILES:
        top.path(file).parent.mkdir(parents=True, exist_ok=True)
        top.path(file).write_text(file.path)
    partition = top.partition("model a", "v1")
    top.sync_inputs_into(partition)
    copied = {p.relative_to(partition.root).as_posix() for p in partition.data_dir.iterdir()}
    assert copied == {f.path for f in SHARED_INPUTS} == SNAPSHOTTED
    assert all(f.scope is Scope.SHARED for f in SHARED_INPUTS) and not PRODUCTION_LOGS.copied


def test_the_comparison_gathers_every_partition_table():
    assert {f.path for f in PARTITION_TABLES} == {path for path in PER_PARTITION if path.endswith(".parquet")}


def test_raw_timings_optional_columns_are_added_as_typed_nulls(tmp_path: Path):
    assert RAW_TIMINGS.optional_types == {
        "load_level": "DOUBLE",
        "retry_count": "BIGINT",
        "labelled_item_id": "VARCHAR",
        "ttft_from_schedule_ms": "DOUBLE",
        "e2e_from_schedule_ms": "DOUBLE",
        "repeat": "BIGINT",
        "cached_tokens": "BIGINT",
        "output_tokens_source": "VARCHAR",
        "reasoning_chunks": "BIGINT",
        "tool_call_chunks": "BIGINT",
        "tool_calls": "BIGINT",
        "t_first_output_ns": "BIGINT",
        "ttfo_ms": "DOUBLE",
        "reasoning_tokens": "BIGINT",
        "reasoning_tokens_source": "VARCHAR",
        "tool_call_valid": "BOOLEAN",
        "structured_output_valid": "BOOLEAN",
        "server_prompt_n": "BIGINT",
        "server_cache_n": "BIGINT",
        "server_prompt_ms": "DOUBLE",
        "server_predicted_n": "BIGINT",
        "server_predicted_ms": "DOUBLE",
        "tool_definition_tokens": "BIGINT",
    }
    old = tmp_path / "old.parquet"
    pq.write_table(pa.table({"request_id": ["a"]}), old)  # written before those columns existed
    with QuerySession({"raw_timings": old, "other": old}) as session:
        viewed = session.con.table("raw_timings").to_arrow_table()
        assert columns(viewed.schema)[1:] == [
            ("load_level", pa.float64()),
            ("retry_count", pa.int64()),
            ("labelled_item_id", pa.string()),
            ("ttft_from_schedule_ms", pa.float64()),
            ("e2e_from_schedule_ms", pa.float64()),
            ("repeat", pa.int64()),
            ("cached_tokens", pa.int64()),
            ("output_tokens_source", pa.string()),
            ("reasoning_chunks", pa.int64()),
            ("tool_call_chunks", pa.int64()),
            ("tool_calls", pa.int64()),
            ("t_first_output_ns", pa.int64()),
            ("ttfo_ms", pa.float64()),
            ("reasoning_tokens", pa.int64()),
            ("reasoning_tokens_source", pa.string()),
            ("tool_call_valid", pa.bool_()),
            ("structured_output_valid", pa.bool_()),
            ("server_prompt_n", pa.int64()),
            ("server_cache_n", pa.int64()),
            ("server_prompt_ms", pa.float64()),
            ("server_predicted_n", pa.int64()),
            ("server_predicted_ms", pa.float64()),
            ("tool_definition_tokens", pa.int64()),
        ]
        assert viewed.column("load_level").to_pylist() == [None]
        assert session.con.table("other").columns == ["request_id"]  # no contract, nothing added


def _journal_table(tmp_path: Path) -> pa.Table:
    """Records as the replay builds them (records.build_record), through the journal."""
    with Journal(tmp_path / "journal.jsonl") as journal:
        journal.append(timing("q1", sent_ns=0, ttft_ns=10 * MS, e2e_ns=50 * MS, tokens=5))
        journal.append(timing("q2", sent_ns=S, ttft_ns=10 * MS, e2e_ns=50 * MS, error="http_500"))
    return journal_to_table(tmp_path / "journal.jsonl")


def test_raw_and_sweep_timings_as_the_replay_writes_them(tmp_path: Path):
    replay = Spec.model_validate(demo_spec_dict()).workload.replay
    record = _journal_table(tmp_path)
    assert columns(record.schema) == columns(contracts.RAW_TIMING_RECORD_SCHEMA)
    # merge_replay_shards: each shard's journal, its shard number, the production level, its run
    raw = with_load_level(with_shard_column(record, Shard(0, 1, str(tmp_path))), production_level(replay))
    raw = with_repeat_column(raw, 0)
    assert columns(raw.schema) == columns(RAW_TIMINGS.file_schema)
    # run_sweep: each level's journal with its level
    sweep = with_load_level(record, load_levels(replay)[0])
    assert columns(sweep.schema) == columns(SWEEP_TIMINGS.file_schema)


def test_log_quarantine_and_plan_as_ingest_sampling_and_planning_write_them(tmp_path: Path):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(DEMO_LOG.read_text().splitlines(keepends=True)[:200]) + "not json\n")
    rows, rejects = tmp_path / "rows.parquet", tmp_path / "rejects.parquet"
    ingest(LogSource(path=str(log), format="openai_jsonl"), tmp_path, rows, rejects, "r1")
    assert columns(pq.read_schema(rows)) == columns(PRODUCTION_LOGS.file_schema)
    assert pq.read_metadata(rejects).num_rows == 1
    assert columns(pq.read_schema(rejects)) == columns(QUARANTINE.file_schema)
    spec = Spec.model_validate(demo_spec_dict())
    sample, _ = draw_sample(rows, spec.workload.sample)
    plan = with_run_id(build_plan(sample, spec.workload.replay, spec.workload.prompts), "r1")  # as replay_plan
    assert plan.num_rows > 0 and columns(plan.schema) == columns(REPLAY_PLAN.file_schema)


def test_slice_and_accuracy_results_as_the_accuracy_assets_write_them():
    config = AccuracySlice.model_validate(demo_spec_dict()["accuracy"])
    items = with_run_id(load_slice(config, DEMO_SLICE), "r1")
    assert columns(items.schema) == columns(LABELLED_SLICE.file_schema)
    item = items.slice(0, 1).to_pylist()[0]
    reply = {
        "candidate": "c",
        "item_id": item["item_id"],
        "label": item["label"],
        "reply": item["label"],
        "status": "ok",
        "sent_at": datetime(2026, 11, 2, tzinfo=UTC),
    }
    results = with_run_id(score_replies(config, items, [reply]), "r1")
    assert columns(results.schema) == columns(ACCURACY_RESULTS.file_schema)


def test_every_asset_check_is_bound_to_a_name_equal_to_the_checks():
    """The pack lists checks by name; the module attribute of the same name is how a reader finds one."""
    for module in ASSET_MODULES:
        for attribute, value in vars(module).items():
            if isinstance(value, AssetChecksDefinition):
                assert [spec.name for spec in value.check_specs] == [attribute], module.__name__


def test_every_column_an_auditor_reads_has_a_description_from_the_registry():
    """The Dagster UI's column descriptions come from pipeline/contracts/columns.py (issue 29: every
    column description was empty)."""
    assert set(BY_TABLE) <= {file.name for file in contracts.PACK_FILES}  # only pack files are described
    audited = ("RAW_TIMINGS", "SWEEP_TIMINGS", "FIGURES", "PRODUCTION_LOGS", "ACCURACY_RESULTS", "LABELLED_SLICE")
    for file in (getattr(contracts, name) for name in audited):
        assert file.file_schema is not None
        assert [c for c in file.file_schema.names if not column_description(file.name, c)] == [], file.name
    assert column_description("figures", "basis").startswith("where it was measured")
    assert column_description("no_such_table", "run_id") == "the Dagster run that wrote the row"
    assert column_description("raw_timings", "no_such_column") is None


def test_a_tables_ui_schema_carries_each_columns_description_and_the_files_sha256(tmp_path):
    path = tmp_path / "raw_timings.parquet"
    table = pa.table({"ttft_ms": [40.0], "unheard_of": [1]})
    pq.write_table(table, path)
    meta = table_metadata(table, path)
    descriptions = {column.name: column.description for column in meta["dagster/column_schema"].columns}
    assert descriptions == {"ttft_ms": column_description("raw_timings", "ttft_ms"), "unheard_of": None}
    assert meta["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
