"""The replay group: replay_plan and client_calibration (shared by every candidate), then per
candidate × model version: endpoint_fingerprint and raw_timings (the spec's own load, one process or
fanned out over shards). sweep_timings, the further load levels, is in assets/sweep.py."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetIn,
    DynamicOut,
    DynamicOutput,
    In,
    MaterializeResult,
    MetadataValue,
    Nothing,
    OpExecutionContext,
    Out,
    asset,
    graph_asset,
    op,
)

from assets.support.checks import check_result, table_check, tied_check
from assets.support.metadata import input_files, table_metadata, with_run_id, written_file
from assets.support.partitions import (
    REVALIDATION_PARTITIONS,
    partition_candidate,
    partition_layout,
    partition_of,
)
from assets.support.privacy import (
    journal_layout,
    planned_requests_with_text,
    text_layout,
    write_raw_timings,
    write_with_text,
)
from assets.support.replays import PartitionReplay, replay_asset
from assets.workload import production_sample
from pipeline.analysis.judge.repeated_figures import unresolved
from pipeline.analysis.tabulate import tables
from pipeline.analysis.tabulate.repeats import run_timings
from pipeline.contracts import (
    CLIENT_CALIBRATION,
    ENDPOINT_FINGERPRINT,
    ITL_HISTOGRAM,
    LABELLED_SLICE,
    PRODUCTION_SAMPLE,
    PROMPT_PROFILE,
    RAW_TIMINGS,
    REPLAY_PLAN,
    REPLAY_SUMMARY,
)
from pipeline.files.layout import write_parquet, write_text
from pipeline.plan.accuracy import with_mixed_accuracy
from pipeline.plan.replay_plan import build_plan, plan_tokenizer, prompt_fit_summary
from pipeline.plan.sessions import session_summary
from pipeline.quality import expectations, rules
from pipeline.reference import ReferenceServer
from pipeline.replay.client_validity.calibration import CLIENT_LIMITED_LAG_MS, calibrate
from pipeline.replay.endpoint.fingerprint import fingerprint, version_key
from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.production.auto_shards import AUTO, shards_from_files
from pipeline.replay.production.repeats import merge_repeats, replay_runs
from pipeline.replay.production.shards import Shard, align_server_metrics, shards_for
from resources import EndpointResource, PackStorage, SpecResource

GROUP = "replay"


@asset(
    group_name=GROUP,
    deps=[production_sample, LABELLED_SLICE.name],  # the slice's items join the plan when accuracy is mixed
    description="What to send and when: offsets computed up front from the sample.",
)
def replay_plan(
    context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> MaterializeResult:
    loaded = spec.load()
    workload, tokenizer = loaded.spec.workload, plan_tokenizer(loaded, endpoint.target)
    text, replay = text_layout(storage, loaded.spec), workload.replay  # the plan is built from the text
    plan = build_plan(pq.read_table(text.path(PRODUCTION_SAMPLE)), replay, workload.prompts, tokenizer)
    plan = with_mixed_accuracy(plan, loaded.spec, text.path(LABELLED_SLICE))
    inputs = [PRODUCTION_SAMPLE, LABELLED_SLICE]  # the pack's copies (the text, where withheld, was read privately)
    meta = write_with_text(context, storage, loaded.spec, REPLAY_PLAN, plan, inputs=inputs)
    meta["mode"] = replay.mode
    meta["prompt_fit"] = MetadataValue.json(prompt_fit_summary(plan, tokenizer))
    meta["sessions"] = MetadataValue.json(session_summary(plan))
    return MaterializeResult(metadata=meta)


def _smallest_context_window(context, spec, layout) -> dict:
    windows = [c.max_context_tokens for c in spec.candidates if c.max_context_tokens]
    return {"max_context_tokens": min(windows, default=None)}


replay_plan_expectations = table_check(
    REPLAY_PLAN,
    "expectations",
    expectations.replay_plan_suite,
    blocking=True,
    description=(
        "great-expectations: ids present and unique, offsets non-decreasing, max_tokens ≥ 1, prompt + max_tokens "
        "within the model's context."
    ),
    frame=expectations.replay_plan_frame,
    params=_smallest_context_window,
)


@asset(
    group_name=GROUP,
    deps=[replay_plan],
    description=(
        "The client's own schedule-lag and TTFT floor at the plan's peak rate, against a zero-delay echo endpoint."
    ),
)
def client_calibration(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    layout, loaded = storage.layout(), spec.load().spec
    settings = ReplaySettings.from_spec(loaded.workload.replay, loaded.privacy.text)
    plan = planned_requests_with_text(storage, loaded)
    journal = journal_layout(storage, loaded, layout).journal(context.run_id, "calibration")
    figures = calibrate(plan, settings, journal, echo_server=lambda: ReferenceServer("zero"))
    path = write_text(json.dumps(figures, indent=2), layout.path(CLIENT_CALIBRATION))
    context.log.info(
        f"client calibration: schedule lag p99 {figures['schedule_lag_ms_p99']} ms at "
        f"{figures['peak_rate_per_s']} req/s"
    )
    return MaterializeResult(
        metadata={
            **written_file(path),
            **input_files(layout, [REPLAY_PLAN]),
            **{k: v for k, v in figures.items() if v is not None},
            "run_id": context.run_id,
        }
    )


@tied_check(
    asset=client_calibration,
    description=(
        "The client keeps the plan's peak schedule against a zero-delay endpoint (else the run is client-limited)."
    ),
)
def client_calibration_not_client_limited(storage: PackStorage) -> AssetCheckResult:
    figures = json.loads(storage.layout().path(CLIENT_CALIBRATION).read_text())
    return AssetCheckResult(
        passed=not figures["client_limited"],
        severity=AssetCheckSeverity.WARN,
        metadata={k: figures[k] for k in ("schedule_lag_ms_p99", "threshold_ms", "errors", "peak_rate_per_s")},
    )


@replay_asset(
    group_name=GROUP,
    deps=[],
    description=(
        "The partition's candidate: models list, server headers, system_fingerprint, probe-reply hashes, "
        "and what its engine says about itself (quantisation, slots) where it says it."
    ),
)
def endpoint_fingerprint(context: AssetExecutionContext, replay: PartitionReplay) -> MaterializeResult:
    document = fingerprint(replay.target)
    document["version_key"] = version_key(document)
    path = write_text(json.dumps([document], indent=2), replay.layout.path(ENDPOINT_FINGERPRINT))
    return MaterializeResult(
        metadata={
            **written_file(path),
            "model_version": document["model_version"],
            "version_key": document["version_key"],
            "fingerprint_sha256": document["fingerprint_sha256"],
            "engine": _engine_in_words(document["engine"]),
            "run_id": context.run_id,
        }
    )


def _engine_in_words(engine: dict | None) -> str:
    if engine is None:
        return "not said by the server"
    precision = (
        f"{engine['quantization']} ({engine['weight_bits']}-bit)" if engine["weight_bits"] else "precision not said"
    )
    slots = f", {engine['slots']} slots" if engine["slots"] else ""
    return f"{precision}{slots}; {engine['source']}"


@tied_check(asset=endpoint_fingerprint, description="The candidate lists the model it is asked to serve.")
def endpoint_fingerprint_model_listed(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    documents = json.loads(partition_layout(storage, context).path(ENDPOINT_FINGERPRINT).read_text())
    absent = [d["candidate"] for d in documents if d["model_version"] == "absent"]
    return AssetCheckResult(passed=not absent, metadata={"candidates_without_their_model": ", ".join(absent) or "none"})


@tied_check(
    asset=endpoint_fingerprint,
    blocking=True,
    description=(
        "The endpoint still serves the model version this partition is about (else its figures would be filed under "
        "the wrong version)."
    ),
)
def endpoint_fingerprint_matches_partition(
    context: AssetCheckExecutionContext, storage: PackStorage
) -> AssetCheckResult:
    (document,) = json.loads(partition_layout(storage, context).path(ENDPOINT_FINGERPRINT).read_text())
    _, version = partition_of(context)
    return check_result(rules.fingerprint_matches_partition(document, version))


@op(
    ins={"plan": In(Nothing), "calibration": In(Nothing)},
    out=DynamicOut(Shard),
    description=(
        "Split the plan across `workload.replay.shards` worker processes (one shard: the whole plan in this process)."
    ),
)
def plan_replay_shards(context: OpExecutionContext, spec: SpecResource, storage: PackStorage):
    loaded = spec.load().spec
    replay, layout = loaded.workload.replay, partition_layout(storage, context)
    barrier = layout.root / "journal" / f"{context.run_id}-start-barrier"
    shutil.rmtree(barrier, ignore_errors=True)
    count = replay.shards
    if count == AUTO:  # sized by the streams in flight (pipeline/replay/production/auto_shards.py)
        settings = ReplaySettings.from_spec(replay, loaded.privacy.text)
        until = replay.until is not None
        count, why = shards_from_files(AUTO, layout.path(REPLAY_PLAN), layout.path(PROMPT_PROFILE), settings, until)
        context.log.info(f"shards: {why}")
    for shard in shards_for(int(count), barrier, replay.executor):
        yield DynamicOutput(shard, mapping_key=shard.label)


@op(
    description=(
        "Replay one shard of the plan against the partition's candidate, from the shards' common start time; "
        "`workload.replay.repeats` times in a row."
    )
)
def replay_shard(
    context: OpExecutionContext, shard: Shard, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> list[dict]:
    run = PartitionReplay(context, spec, storage, endpoint, progress=shard.count == 1)
    # shard 0: the prefix-cache warm-up, then the server's own view
    with run.beside_production_replay(shard.index, context.log.warning):
        judge = (lambda timings: unresolved(run.spec, timings)) if run.replay.until is not None else None
        return replay_runs(run.plan, run.runs, shard, run.replay, log=context.log.info, unresolved=judge)


@op(out=Out(Nothing), description="Merge the shards' journals into one raw_timings table and the replay summary.")
def merge_replay_shards(
    context: OpExecutionContext, shards: list[list[dict]], spec: SpecResource, storage: PackStorage
) -> None:
    layout, loaded = partition_layout(storage, context), spec.load().spec
    reports = [report for shard_reports in shards for report in shard_reports]  # every shard's every run
    timings, summary = merge_repeats(reports, loaded.workload.replay)
    align_server_metrics(layout, reports)  # on Dask: shard 0's /metrics scrapes onto the rows' timeline
    meta = input_files(layout, [REPLAY_PLAN, CLIENT_CALIBRATION])  # the partition's copies, as the pack names them
    path = write_raw_timings(storage, loaded, layout, RAW_TIMINGS, timings)
    summary_path = write_text(json.dumps(summary, indent=2), layout.path(REPLAY_SUMMARY))
    meta.update(table_metadata(timings, path, context.run_id))
    meta["replay_summary_sha256"] = written_file(summary_path)["sha256"]
    # the analysis tables are the first run's (pipeline/analysis/tabulate/repeats.py): so is the ITL histogram they read
    meta.update(write_itl_histogram(run_timings(timings, 0), spec.load().spec, layout, context.run_id))
    meta.update(
        errors=summary["errors"], unsent=summary["unsent"], shards=len(shards), summary=MetadataValue.json(summary)
    )
    context.add_output_metadata(meta)


def write_itl_histogram(timings: pa.Table, spec, layout, run_id: str) -> dict:
    """Every gap counted per µs beside raw_timings, from the table still in memory: the analysis
    reads this instead of decoding every gap list again (`loadproof verify` re-builds it)."""
    histogram = with_run_id(tables.itl_histogram(timings, spec), run_id)
    path = write_parquet(histogram, layout.path(ITL_HISTOGRAM))
    return {
        "itl_histogram": MetadataValue.path(str(path)),
        "itl_histogram_sha256": written_file(path)["sha256"],
        "itl_histogram_rows": histogram.num_rows,
    }


@graph_asset(
    group_name=GROUP,
    ins={"replay_plan": AssetIn(dagster_type=Nothing), "client_calibration": AssetIn(dagster_type=Nothing)},
    partitions_def=REVALIDATION_PARTITIONS,
    description=(
        "One row per replayed request of the partition's candidate: every lifecycle timestamp, monotonic clock; sent "
        "by one process or fanned out over shards."
    ),
)
def raw_timings(replay_plan, client_calibration):
    shards = plan_replay_shards(plan=replay_plan, calibration=client_calibration)
    return merge_replay_shards(shards.map(replay_shard).collect())


def _planned_requests_and_candidate(context, spec, layout) -> dict:
    plan = pq.read_table(layout.path(REPLAY_PLAN), columns=["request_id"])
    return {
        "planned": plan.column("request_id").to_pylist(),
        "candidates": [partition_candidate(context, spec).name],
        "repeats": replayed_runs(spec, layout),
    }


def replayed_runs(spec, layout) -> int:
    """The runs replayed: `workload.replay.repeats`, or as many as `until: resolved` took (the summary's)."""
    if spec.workload.replay.until is None:
        return spec.workload.replay.repeats
    return json.loads(layout.path(REPLAY_SUMMARY).read_text()).get("repeats", 1)


raw_timings_one_row_per_planned_request = table_check(
    RAW_TIMINGS,
    "one_row_per_planned_request",
    expectations.raw_timings_complete_suite,
    blocking=True,
    description="great-expectations: exactly one row per planned request, candidate and run (workload.replay.repeats).",
    columns=["candidate", "request_id", "repeat"],
    suite_name="raw_timings_complete",
    params=_planned_requests_and_candidate,
)
raw_timings_expectations = table_check(
    RAW_TIMINGS,
    "expectations",
    expectations.raw_timings_suite,
    blocking=True,
    description=(
        "great-expectations: status typed, send ≤ first byte ≤ first token ≤ last token ≤ end, TTFT ≤ E2E, no "
        "negative duration, output ≤ max_tokens (within the count's uncertainty: output_tokens_source)."
    ),
)
raw_timings_stream_tokens_seen = table_check(
    RAW_TIMINGS,
    "stream_tokens_seen",
    expectations.stream_tokens_seen_suite,
    blocking=True,
    description=(
        "TPOT and ITL agree beyond what batching explains: the server's output count is at most 2× the tokens of the "
        "text the client received, for 95 % of requests (else tokens streamed in a form the reader missed)."
    ),
    suite_name="stream_tokens_seen",
)
raw_timings_stream_gaps = table_check(
    RAW_TIMINGS,
    "stream_gaps",
    expectations.stream_gaps_suite,
    severity=AssetCheckSeverity.WARN,
    description=(
        "Tokens arrive one by one: no bursts of zero gaps (a server that buffers output and flushes it, which "
        "collapses ITL and delays TTFO)."
    ),
    suite_name="stream_gaps",
)
raw_timings_endpoint_health = table_check(
    RAW_TIMINGS,
    "endpoint_health",
    expectations.endpoint_health_suite,
    severity=AssetCheckSeverity.WARN,
    description=(
        "Error rate within the spec's budget; schedule lag p99 within the client-validity bound (else the client was "
        "the bottleneck)."
    ),
    suite_name="endpoint_health",
    params=lambda context, spec, layout: {
        "max_error_rate": spec.sla.max_error_rate,
        "max_schedule_lag_ms_p99": CLIENT_LIMITED_LAG_MS,
    },
)
