"""labelled_slice → accuracy_results → accuracy_summary, accuracy_by_label (the buyer's slice).

Without an `accuracy:` section in the spec the assets write empty tables, so the graph stays
the same for every spec.
"""

import pyarrow.parquet as pq
from dagster import (
    AssetExecutionContext,
    MaterializeResult,
    asset,
)

from assets.replay import raw_timings
from assets.support.checks import table_check
from assets.support.metadata import source_files
from assets.support.partition_assets import derived_table_asset
from assets.support.partitions import (
    REVALIDATION_PARTITIONS,
    partition_candidate,
    partition_layout,
)
from assets.support.privacy import text_layout, write_with_text
from pipeline.accuracy.client import replay_slice
from pipeline.accuracy.labelled_slice import (
    empty_results,
    empty_slice,
    label_set,
    load_slice,
    predictions_within_labels,
    score_replies,
)
from pipeline.accuracy.replies import labelled_replies
from pipeline.analysis.tabulate import tables
from pipeline.contracts import ACCURACY_BY_LABEL, ACCURACY_RESULTS, ACCURACY_SUMMARY, LABELLED_SLICE, RAW_TIMINGS
from pipeline.quality import expectations
from resources import EndpointResource, PackStorage, SpecResource

GROUP = "accuracy"


@asset(
    group_name=GROUP,
    description="The buyer's labelled slice (CSV or JSONL): each item with its label and rendered prompt.",
)
def labelled_slice(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded = spec.load()
    config = loaded.spec.accuracy
    table = empty_slice() if config is None else load_slice(config, loaded.resolve(config.path))
    meta = write_with_text(context, storage, loaded.spec, LABELLED_SLICE, table)  # the pack's: ids and labels
    if config is not None:
        meta.update(source_files([loaded.resolve(config.path)]))
    meta["configured"] = config is not None
    return MaterializeResult(metadata=meta)


labelled_slice_well_formed = table_check(
    LABELLED_SLICE,
    "well_formed",
    expectations.labelled_slice_suite,
    blocking=True,
    description=(
        "great-expectations: a configured slice has items, unique ids, a label on each, within the spec's labels."
    ),
    params=lambda context, spec, layout: {
        "configured": spec.accuracy is not None,
        "labels": spec.accuracy.labels if spec.accuracy else None,
    },
)


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
    text = text_layout(storage, loaded.spec, layout)  # the items' prompts and the replies (mixed: raw timings)
    slice_table = pq.read_table(text_layout(storage, loaded.spec).path(LABELLED_SLICE))
    table = empty_results()
    if config is not None and config.mode == "mixed":  # answered during the load replay
        table = score_replies(config, slice_table, labelled_replies(text.path(RAW_TIMINGS), slice_table))
    elif config is not None:
        items, candidate = slice_table.to_pylist(), partition_candidate(context, loaded.spec)
        context.log.info(f"scoring {len(items)} labelled items on {candidate.name}")
        target = endpoint.target(candidate)
        replies = replay_slice(items, target, config.max_tokens, config.concurrency, config.request_timeout_s)
        table = score_replies(config, slice_table, replies)
    if config is not None and loaded.spec.privacy.text != "keep":  # a non-label prediction is the reply itself
        table = predictions_within_labels(config, slice_table, table)
    # the committee sees scores and the confusion table; the replies stay with the text (hash, drop)
    inputs = [LABELLED_SLICE, RAW_TIMINGS]  # the pack's copies (the text, where withheld, was read privately)
    return MaterializeResult(
        metadata=write_with_text(context, storage, loaded.spec, ACCURACY_RESULTS, table, layout, inputs=inputs)
    )


def _slice_items_and_labels(context, spec, layout) -> dict:
    slice_table, config = pq.read_table(layout.path(LABELLED_SLICE)), spec.accuracy
    return {
        "items": slice_table.column("item_id").to_pylist(),
        "candidates": [partition_candidate(context, spec).name] if config else [],
        "labels": label_set(config, slice_table.column("label").to_pylist()) if config else [],
        "closed_predictions": config is not None and config.scorer == "choice",
    }


accuracy_results_one_per_item = table_check(
    ACCURACY_RESULTS,
    "one_per_item",
    expectations.accuracy_results_suite,
    blocking=True,
    description=(
        "great-expectations: one row per slice item and candidate, each scored or marked unscorable; labels (and "
        "choice predictions) within the label set."
    ),
    frame=expectations.accuracy_results_frame,
    params=_slice_items_and_labels,
)


# the two tables scored from the results, each one query over them
accuracy_summary, accuracy_by_label = (
    derived_table_asset(file, compute, ACCURACY_RESULTS, group=GROUP, deps=[accuracy_results], description=text)
    for file, compute, text in (
        (
            ACCURACY_SUMMARY,
            tables.accuracy_summary,
            "Accuracy per candidate with a Wilson interval and the delta to the published accuracy.",
        ),
        (ACCURACY_BY_LABEL, tables.accuracy_by_label, "Per-label accuracy and the confusion matrix (long form)."),
    )
)


accuracy_summary_in_bounds = table_check(
    ACCURACY_SUMMARY,
    "in_bounds",
    expectations.proportion_suite,
    blocking=True,
    description="great-expectations: 0 ≤ Wilson low ≤ accuracy ≤ Wilson high ≤ 1.",
    params={"column": "accuracy", "n": "scored"},
)


accuracy_by_label_in_bounds = table_check(
    ACCURACY_BY_LABEL,
    "in_bounds",
    expectations.proportion_suite,
    description="great-expectations: each label's accuracy lies inside its Wilson interval.",
    params={"column": "label_accuracy", "n": "label_items"},
)
