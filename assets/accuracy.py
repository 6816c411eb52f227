"""labelled_slice → accuracy_results → accuracy_summary, accuracy_by_label (the buyer's slice).

Without an `accuracy:` section in the spec the assets write empty tables, so the graph stays
the same for every spec.
"""

import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    asset,
    asset_check,
)

from assets.replay import raw_timings
from assets.support.checks import check_result
from assets.support.metadata import materialise_table, table_metadata, with_run_id
from assets.support.partitions import (
    REVALIDATION_PARTITIONS,
    partition_candidate,
    partition_layout,
)
from pipeline.accuracy.client import replay_slice
from pipeline.accuracy.labelled_slice import (
    empty_results,
    empty_slice,
    label_set,
    load_slice,
    score_replies,
)
from pipeline.accuracy.replies import labelled_replies
from pipeline.analysis import tables
from pipeline.pack.layout import write_parquet
from pipeline.quality import expectations
from resources import EndpointResource, PackStorage, SpecResource

GROUP = "accuracy"


@asset(
    group_name=GROUP,
    description="The buyer's labelled slice (CSV or JSONL): each item with its label and rendered prompt.",
)
def labelled_slice(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    config = loaded.spec.accuracy
    table = empty_slice() if config is None else load_slice(config, loaded.resolve(config.path))
    path = write_parquet(with_run_id(table, context.run_id), layout.table("labelled_slice"))
    meta = table_metadata(table, path, context.run_id)
    meta["configured"] = config is not None
    return MaterializeResult(metadata=meta)


@asset_check(
    asset=labelled_slice,
    blocking=True,
    description=(
        "great-expectations: a configured slice has items, unique ids, a label on each, within the spec's labels."
    ),
)
def labelled_slice_well_formed(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.layout().table("labelled_slice")).to_pandas()
    config = spec.load().spec.accuracy
    params = {"configured": config is not None, "labels": config.labels if config else None}
    outcome = expectations.validate(expectations.labelled_slice_suite, frame, params, name="labelled_slice")
    return check_result(outcome)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[labelled_slice, raw_timings],  # separate: after the load replay; mixed: scored from it
    description=(
        "Every slice item sent to the partition's candidate, its reply scored: on its own after the load (separate, "
        "non-streaming) or among the load's requests (mixed)."
    ),
)
def accuracy_results(
    context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> MaterializeResult:
    loaded, layout = spec.load(), partition_layout(storage, context)
    config = loaded.spec.accuracy
    slice_table = pq.read_table(layout.table("labelled_slice"))
    table = empty_results()
    if config is not None and config.mode == "mixed":  # answered during the load replay
        table = score_replies(config, slice_table, labelled_replies(layout.table("raw_timings"), slice_table))
    elif config is not None:
        items, candidate = slice_table.to_pylist(), partition_candidate(context, loaded.spec)
        context.log.info(f"scoring {len(items)} labelled items on {candidate.name}")
        target = endpoint.target(candidate)
        replies = replay_slice(items, target, config.max_tokens, config.concurrency, config.request_timeout_s)
        table = score_replies(config, slice_table, replies)
    path = write_parquet(with_run_id(table, context.run_id), layout.table("accuracy_results"))
    return MaterializeResult(metadata=table_metadata(table, path, context.run_id))


@asset_check(
    asset=accuracy_results,
    blocking=True,
    description=(
        "great-expectations: one row per slice item and candidate, each scored or marked unscorable; labels (and "
        "choice predictions) within the label set."
    ),
)
def accuracy_results_one_per_item(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    layout, loaded = partition_layout(storage, context), spec.load().spec
    slice_table = pq.read_table(layout.table("labelled_slice"))
    config = loaded.accuracy
    params = {
        "items": slice_table.column("item_id").to_pylist(),
        "candidates": [partition_candidate(context, loaded).name] if config else [],
        "labels": label_set(config, slice_table.column("label").to_pylist()) if config else [],
        "closed_predictions": config is not None and config.scorer == "choice",
    }
    frame = expectations.accuracy_results_frame(pq.read_table(layout.table("accuracy_results")))
    outcome = expectations.validate(expectations.accuracy_results_suite, frame, params, name="accuracy_results")
    return check_result(outcome)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[accuracy_results],
    description="Accuracy per candidate with a Wilson interval and the delta to the published accuracy.",
)
def accuracy_summary(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "accuracy_summary", tables.accuracy_summary, "accuracy_results", spec, storage)


@asset_check(
    asset=accuracy_summary,
    blocking=True,
    description="great-expectations: 0 ≤ Wilson low ≤ accuracy ≤ Wilson high ≤ 1.",
)
def accuracy_summary_in_bounds(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(partition_layout(storage, context).table("accuracy_summary")).to_pandas()
    params = {"column": "accuracy", "n": "scored"}
    outcome = expectations.validate(expectations.proportion_suite, frame, params, name="accuracy_summary")
    return check_result(outcome)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[accuracy_results],
    description="Per-label accuracy and the confusion matrix (long form).",
)
def accuracy_by_label(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "accuracy_by_label", tables.accuracy_by_label, "accuracy_results", spec, storage)


@asset_check(
    asset=accuracy_by_label, description="great-expectations: each label's accuracy lies inside its Wilson interval."
)
def accuracy_by_label_in_bounds(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(partition_layout(storage, context).table("accuracy_by_label")).to_pandas()
    params = {"column": "label_accuracy", "n": "label_items"}
    outcome = expectations.validate(expectations.proportion_suite, frame, params, name="accuracy_by_label")
    return check_result(outcome)
