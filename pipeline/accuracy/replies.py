"""Accuracy mixed into the load, after the replay: the labelled items' replies read back from
the raw timings, and the production requests the load figures count (the plan side is
`pipeline.plan.accuracy`, which says how the items are placed)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.duck.session import run_query

REPLY_KEYS = (  # the fields of a reply record (pipeline.accuracy.client), besides the label
    "candidate",
    "item_id",
    "reply",
    "status",
    "error_type",
    "http_status",
    "latency_ms",
    "prompt_tokens",
    "output_tokens",
    "sent_at",
)


def labelled_replies(raw_timings: Path | pa.Table, slice_table: pa.Table) -> list[dict]:
    """The reply records of the labelled requests (sql/labelled_replies.sql), each with its label,
    ready for `pipeline.accuracy.labelled_slice.score_replies`."""
    labels = dict(zip(slice_table.column("item_id").to_pylist(), slice_table.column("label").to_pylist()))
    rows = run_query("labelled_replies", {"raw_timings": raw_timings}).to_pylist()
    return [{key: row[key] for key in REPLY_KEYS} | {"label": labels.get(row["item_id"])} for row in rows]


def production_requests(timings: pa.Table) -> pa.Table:
    """The raw timings the load figures count: every row but the labelled items mixed into the
    load (accuracy mode `mixed`, scored in accuracy_results instead)."""
    if "labelled_item_id" not in timings.schema.names:
        return timings
    return timings.filter(pc.is_null(timings.column("labelled_item_id")))
