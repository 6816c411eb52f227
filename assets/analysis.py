"""The analysis group, per candidate × model version.

- raw_timings → latency_percentiles, throughput, throughput_buckets, error_breakdown,
  cost_per_decision: one multi-asset, so the shared steps (the steady-state window, the 1-second
  buckets) are staged once in one DuckDB session (SQL in sql/), each table still its own asset
  with its own checks.
- sweep_timings → sweep_levels → sweep_summary: the load sweep's tables (empty without
  `workload.replay.sweep`, and the pack then has no sweep section).
- the tables above, accuracy_summary and arm_figures → figures: every figure the pack shows, one
  checked table (pipeline/analysis/judge/figures_table.py); the pack only reads it.
"""

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    MaterializeResult,
    MetadataValue,
    multi_asset,
)

from assets.accuracy import accuracy_summary
from assets.replay import raw_timings
from assets.support.analysis_inputs import (
    CAPACITY_INPUTS,
    ENDPOINT_VIEW_INPUTS,
    FIGURES_INPUTS,
    STAGED_QUERIES,
    TABLE_INPUTS,
)
from assets.support.checks import check_result, table_check, tied_check
from assets.support.metadata import write_table
from assets.support.partition_assets import partition_asset
from assets.support.partitions import (
    REVALIDATION_PARTITIONS,
    partition_candidate,
    partition_layout,
)
from assets.sweep import sweep_timings
from pipeline.accuracy.replies import production_requests
from pipeline.analysis.endpoint_view.endpoint_views import ENDPOINT_VIEWS, endpoint_views
from pipeline.analysis.judge.figures_table import (
    claimed_verdicts,
    figures_markdown,
    figures_of_folder,
)
from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.sizing.capacity import capacity_of_folder
from pipeline.analysis.tabulate.repeats import first_run, run_timings
from pipeline.analysis.tabulate.tables import analyse_all
from pipeline.contracts import (
    ACCURACY_SUMMARY,
    CAPACITY,
    COST_PER_DECISION,
    ERROR_BREAKDOWN,
    FIGURES,
    ITL_HISTOGRAM,
    LATENCY_PERCENTILES,
    RAW_TIMINGS,
    SWEEP_LEVELS,
    SWEEP_SUMMARY,
    SWEEP_TIMINGS,
    THROUGHPUT,
    THROUGHPUT_BUCKETS,
)
from pipeline.files.layout import PackLayout
from pipeline.quality import expectations, rules
from pipeline.spec import Spec
from resources import PackStorage, SpecResource

GROUP = "analysis"
TABLES = {
    LATENCY_PERCENTILES: (
        "TTFT, TPOT, ITL, E2E p50…p99.9, overall and per prompt-length bucket, exact order-statistic intervals, "
        "steady state."
    ),
    THROUGHPUT: "Output/total tokens per second, requests per second, goodput, error rate.",
    THROUGHPUT_BUCKETS: "The replay in 1-second buckets: requests sent, succeeded, good and failed, tokens.",
    ERROR_BREAKDOWN: "Every planned request by outcome (ok or error type), with Wilson intervals.",
    COST_PER_DECISION: (
        "Cost of the steady-state window per useful decision (succeeded, met the SLA, correct where scored) "
        "and per million output tokens."
    ),
}


@multi_asset(
    specs=[
        AssetSpec(
            file.name,
            group_name=GROUP,
            # upstream: the assets that wrote its inputs (raw_timings also writes the ITL histogram)
            deps=[raw_timings, *([accuracy_summary] if ACCURACY_SUMMARY in TABLE_INPUTS[file] else [])],
            description=text,
            skippable=True,  # subsettable: one table can be materialised alone
        )
        for file, text in TABLES.items()
    ],
    partitions_def=REVALIDATION_PARTITIONS,
    name="analysis_tables",
    can_subset=True,
)
def analysis_tables(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage):
    """The selected tables (every one in the job; one alone when materialised alone) from one
    DuckDB session; a table not selected is neither written nor reported."""
    loaded, layout = spec.load(), partition_layout(storage, context)
    selected = [file for file in TABLES if AssetKey(file.name) in context.selected_asset_keys]
    accuracy = None
    if COST_PER_DECISION in selected:
        accuracy = pq.read_table(layout.path(ACCURACY_SUMMARY))
    tables = analyse_all(  # a repeated replay's first run (pipeline/analysis/tabulate/repeats.py)
        first_run(layout.path(RAW_TIMINGS)),
        loaded.spec,
        accuracy if accuracy is not None and accuracy.num_rows else None,
        layout.path(ITL_HISTOGRAM),
    )
    for file in selected:
        meta = write_table(
            context, layout, file, tables[file.name], sql=True, staged=STAGED_QUERIES[file], inputs=TABLE_INPUTS[file]
        )
        yield MaterializeResult(asset_key=file.name, metadata=meta)


latency_percentiles_ordered = table_check(
    LATENCY_PERCENTILES,
    "ordered",
    expectations.latency_percentiles_suite,
    blocking=True,
    description=(
        "great-expectations: p50 ≤ p90 ≤ p95 ≤ p99 ≤ p99.9 per series, each value inside its interval, no NaN where n "
        "> 0."
    ),
    frame=expectations.latency_percentiles_frame,
)
throughput_consistent = table_check(
    THROUGHPUT,
    "consistent",
    expectations.throughput_suite,
    blocking=True,
    description="great-expectations: no NaN or negative rate; goodput ≤ requests/s; tokens/s × window = token sum.",
    frame=expectations.throughput_frame,
)


@tied_check(
    asset=THROUGHPUT_BUCKETS.name,
    blocking=True,
    description="great-expectations: every request that ended is counted in exactly one bucket of its candidate.",
)
def throughput_buckets_add_up(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    layout = partition_layout(storage, context)
    path = layout.path(RAW_TIMINGS)
    names = pq.read_schema(path).names
    labelled = ["labelled_item_id"] if "labelled_item_id" in names else []
    repeat = ["repeat"] if "repeat" in names else []  # the buckets are the first run's
    timings = production_requests(
        run_timings(pq.read_table(path, columns=["candidate", "t_end_ns", "t_sent_ns", *labelled, *repeat]), 0)
    )
    ended = timings.filter(pc.and_(pc.is_valid(timings.column("t_end_ns")), pc.is_valid(timings.column("t_sent_ns"))))
    counts = {
        row["candidate"]: row["count"]
        for row in ended.group_by("candidate")
        .aggregate([("candidate", "count")])
        .rename_columns(["candidate", "count"])
        .to_pylist()
    }
    frame = expectations.throughput_buckets_frame(pq.read_table(layout.path(THROUGHPUT_BUCKETS)), counts)
    outcome = expectations.validate(
        expectations.throughput_buckets_suite, frame, {"candidates": sorted(counts)}, name="throughput_buckets"
    )
    return check_result(outcome)


error_breakdown_sums_to_one = table_check(
    ERROR_BREAKDOWN,
    "sums_to_one",
    expectations.error_breakdown_suite,
    blocking=True,
    description=(
        "great-expectations: each candidate's outcome rates sum to one, counts to its planned requests; rates inside "
        "their Wilson intervals."
    ),
    frame=expectations.error_breakdown_frame,
)
cost_per_decision_non_negative = table_check(
    COST_PER_DECISION,
    "non_negative",
    expectations.cost_per_decision_suite,
    blocking=True,
    description=(
        "great-expectations: cost present and non-negative for every candidate; cost per decision inside its interval."
    ),
)


@partition_asset(
    group_name=GROUP,
    deps=[raw_timings, sweep_timings, accuracy_summary],
    description=(
        "Per candidate × load level: throughput, goodput, SLA attainment, error rate, TTFT/TPOT/E2E percentiles, cost "
        "per useful decision."
    ),
)
def sweep_levels(context: AssetExecutionContext, spec: Spec, layout: PackLayout) -> MaterializeResult:
    if not sweep_analysis.sweep_ran(spec):
        table = pa.table({"candidate": pa.array([], pa.string()), "load_level": pa.array([], pa.float64())})
    else:
        accuracy = pq.read_table(layout.path(ACCURACY_SUMMARY))
        table = sweep_analysis.sweep_levels(
            first_run(layout.path(RAW_TIMINGS)),
            layout.path(SWEEP_TIMINGS),
            spec,
            accuracy if accuracy.num_rows else None,
        )
    inputs = (RAW_TIMINGS, SWEEP_TIMINGS, ACCURACY_SUMMARY)
    return MaterializeResult(metadata=write_table(context, layout, SWEEP_LEVELS, table, sql=True, inputs=inputs))


@tied_check(
    asset=sweep_levels,
    blocking=True,
    description="One row per candidate × measured level, the production level among them, proportions in [0, 1].",
)
def sweep_levels_complete(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    loaded = spec.load().spec
    outcome = rules.sweep_levels_complete(
        pq.read_table(partition_layout(storage, context).path(SWEEP_LEVELS)).to_pylist(),
        [partition_candidate(context, loaded).name],
        sweep_analysis.sweep_ran(loaded),
    )
    return check_result(outcome)


@partition_asset(
    group_name=GROUP,
    deps=[sweep_levels],
    description=(
        "Per candidate: the highest load level still meeting the SLA, its goodput and cost per useful decision, the "
        "headroom over production."
    ),
)
def sweep_summary(context: AssetExecutionContext, spec: Spec, layout: PackLayout) -> MaterializeResult:
    levels = pq.read_table(layout.path(SWEEP_LEVELS))
    if not sweep_analysis.sweep_ran(spec):
        table = pa.table({"candidate": pa.array([], pa.string()), "max_sla_load_level": pa.array([], pa.float64())})
    else:
        table = sweep_analysis.sweep_summary(levels.drop_columns(["run_id"]), spec)
    meta = write_table(context, layout, SWEEP_SUMMARY, table, sql=True, inputs=[SWEEP_LEVELS])
    for row in table.to_pylist():
        context.log.info(
            f"{row['candidate']}: highest load still meeting the SLA: {row.get('max_sla_load_level_label')}"
        )
    return MaterializeResult(metadata=meta)


@tied_check(
    asset=sweep_summary,
    blocking=True,
    description="The chosen level and every lighter level met the SLA; the first missing level is above it.",
)
def sweep_summary_consistent(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    layout = partition_layout(storage, context)
    outcome = rules.sweep_summary_consistent(
        pq.read_table(layout.path(SWEEP_LEVELS)).to_pylist(),
        pq.read_table(layout.path(SWEEP_SUMMARY)).to_pylist(),
    )
    return check_result(outcome)


@partition_asset(
    group_name=GROUP,
    deps=[sweep_summary],
    description=(
        "Per candidate: the capacity at the SLA, the bracket around the knee (last level met, first missed, closed "
        "to the precision or why not) and the requests/s and output tokens/s served there with their intervals."
    ),
)
def capacity(context: AssetExecutionContext, spec: Spec, layout: PackLayout) -> MaterializeResult:
    table = capacity_of_folder(layout.root, spec)
    return MaterializeResult(metadata=write_table(context, layout, CAPACITY, table, inputs=CAPACITY_INPUTS))


@tied_check(
    asset=capacity,
    description="The bracket is ordered (last met below first missed) and each rate lies inside its interval.",
)
def capacity_bracket_ordered(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    rows = pq.read_table(partition_layout(storage, context).path(CAPACITY)).to_pylist()
    return check_result(rules.capacity_rows_consistent(rows))


@partition_asset(
    group_name=GROUP,
    deps=[*(file.name for file in TABLES), accuracy_summary, sweep_summary, capacity, "arm_figures"],
    description=(
        "Every figure the pack shows, one row each (candidate × metric × basis; a repeated replay's runs too): "
        "claim, measured, interval, n, interval method, verdict, the query and the input files' sha256."
    ),
)
def figures(context: AssetExecutionContext, spec: Spec, layout: PackLayout) -> MaterializeResult:
    table = figures_of_folder(layout.root, spec)
    meta = write_table(context, layout, FIGURES, table, inputs=FIGURES_INPUTS)
    rows = table.to_pylist()  # the rows written: what the pack reads back and renders
    meta["figures"] = MetadataValue.md(figures_markdown(rows))
    meta["verdicts"] = MetadataValue.json(claimed_verdicts(rows))
    return MaterializeResult(metadata=meta)


@tied_check(
    asset=figures,
    blocking=True,
    description=(
        "Every production-load figure of the metric catalogue is there (accuracy where scored), every claimed "
        "figure has a row, n ≥ 0, each measured value inside its interval, verdicts one of the four words."
    ),
)
def figures_consistent(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    loaded, layout = spec.load().spec, partition_layout(storage, context)
    outcome = rules.figures_consistent(
        pq.read_table(layout.path(FIGURES)).to_pylist(),
        partition_candidate(context, loaded).name,
        list(loaded.claim.figures),
        pq.read_metadata(layout.path(ACCURACY_SUMMARY)).num_rows > 0,
    )
    return check_result(outcome)


@multi_asset(
    specs=[
        AssetSpec(
            file.name,
            group_name=GROUP,
            deps=[raw_timings, THROUGHPUT.name, sweep_timings],
            description=f"The endpoint's own view: {file.about} (pipeline/analysis/endpoint_view/endpoint_views.py).",
        )
        for file in ENDPOINT_VIEWS
    ],
    partitions_def=REVALIDATION_PARTITIONS,
    name="endpoint_view_tables",
)
def endpoint_view_tables(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage):
    layout = partition_layout(storage, context)
    views = endpoint_views(layout.root, spec.load().spec)
    for file in ENDPOINT_VIEWS:
        meta = write_table(context, layout, file, pa.Table.from_pylist(views[file.name]), inputs=ENDPOINT_VIEW_INPUTS)
        yield MaterializeResult(asset_key=file.name, metadata=meta)


def _view_check(file):
    @tied_check(
        asset=file.name,
        name=f"{file.name}_in_bounds",
        description=(
            "One row per candidate (and load level); shares in [0, 1], counts and power ≥ 0, utilisation ≤ 100 %."
        ),
    )
    def check(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
        rows = pq.read_table(partition_layout(storage, context).path(file)).to_pylist()
        return check_result(rules.endpoint_view_in_bounds(file.name, rows))

    return check


(
    token_agreement_in_bounds,
    prefix_cache_hits_in_bounds,
    server_timings_in_bounds,
    server_ttft_in_bounds,
    server_levels_in_bounds,
    gpu_energy_in_bounds,
) = (_view_check(file) for file in ENDPOINT_VIEWS)
