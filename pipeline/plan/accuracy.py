"""Accuracy mixed into the load (`accuracy.mode: mixed`).

The buyer's question is often "is it still right when it is busy?": the labelled items are then
sent during the load replay, among the production requests, rather than on their own after it.

- Plan: every labelled item becomes one planned request (`request_id` `labelled:<item id>`,
  `prompt_source` `labelled`, `labelled_item_id` set) at a planned offset inside the production
  plan's span: spread evenly (item k of K at first + (k + ½)·span/K) or, with
  `placement: random`, at seeded uniform random offsets. In closed-loop mode (no offsets) the
  items are interleaved evenly by position instead. Each candidate gets the same plan, so each
  answers every item once.
- Engine: a labelled request is streamed like any other (same client, same pacing), at
  temperature 0; its reply text is recorded (`reply_text`) for those requests only.
- Figures: labelled requests are load the endpoint really served, so they shape the production
  requests' latency, but they are left out of the latency, throughput, goodput, error and cost
  figures (sql/steady_requests.sql, sql/itl_histogram.sql skip them): those keep describing
  production's own traffic, whose lengths the labelled prompts would distort. They are scored in
  accuracy_results (from sql/labelled_replies.sql), with their E2E as `latency_ms`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.contracts import REPLAY_PLAN_SCHEMA
from pipeline.plan.replay_plan import tokenizer_for
from pipeline.spec import Spec
from pipeline.spec.accuracy import AccuracySlice
from pipeline.spec.workload import Prompts

REQUEST_ID_PREFIX = "labelled:"


def labelled_offsets(production: list[float | None], count: int, placement: str, seed: int) -> list[float]:
    """Planned offsets for `count` labelled items inside the production plan's span."""
    offsets = [o for o in production if o is not None]
    first, last = (min(offsets), max(offsets)) if offsets else (0.0, 0.0)
    span = last - first
    if placement == "random":
        rng = random.Random(seed)
        return sorted(first + rng.random() * span for _ in range(count))
    return [first + (k + 0.5) * span / count for k in range(count)]


def labelled_positions(production_rows: int, count: int) -> list[int]:
    """Closed loop (no offsets): the production index before which each item goes, evenly."""
    return [int((k + 0.5) * production_rows / count) for k in range(count)]


def labelled_rows(slice_table: pa.Table, config: AccuracySlice, prompts: Prompts | None = None) -> list[dict]:
    """One plan row per labelled item (its offset is set by `mix_into_plan`)."""
    tokenizer = tokenizer_for(prompts or Prompts())
    rows = []
    for item in slice_table.to_pylist():
        messages = json.loads(item["messages_json"])
        tokens = tokenizer.count_messages(messages)
        rows.append(
            {
                "request_id": REQUEST_ID_PREFIX + item["item_id"],
                "scheduled_offset_s": None,
                "messages_json": item["messages_json"],
                "max_tokens": config.max_tokens,
                "min_tokens": None,  # a classification answers and stops
                "prompt_source": "labelled",
                "tokenizer": tokenizer.name,
                "prompt_tokens_logged": tokens,
                "prompt_tokens_client": tokens,
                "prompt_tokens_error": 0,
                "source_line": item["source_line"],
                "labelled_item_id": item["item_id"],
            }
        )
    return rows


def mix_into_plan(
    plan: pa.Table, slice_table: pa.Table, config: AccuracySlice, prompts: Prompts | None = None
) -> pa.Table:
    """The production plan with every labelled item placed among its requests (module doc)."""
    production = plan.to_pylist()
    labelled = labelled_rows(slice_table, config, prompts)
    if not labelled:
        return plan
    taken = {row["request_id"] for row in production}
    clash = next((row["request_id"] for row in labelled if row["request_id"] in taken), None)
    if clash is not None:
        raise ValueError(f"accuracy.mode mixed: the plan already has a request id {clash!r}")
    offsets = [row["scheduled_offset_s"] for row in production]
    if production and all(o is None for o in offsets):  # closed loop: interleave by position
        merged = list(production)
        for row, position in reversed(list(zip(labelled, labelled_positions(len(production), len(labelled))))):
            merged.insert(position, row)
        return pa.Table.from_pylist(merged, schema=REPLAY_PLAN_SCHEMA)
    for row, offset in zip(labelled, labelled_offsets(offsets, len(labelled), config.placement, config.seed)):
        row["scheduled_offset_s"] = offset
    # stable merge by offset: at an equal offset the production request goes first
    keyed = [(row["scheduled_offset_s"] or 0.0, 0, i, row) for i, row in enumerate(production)]
    keyed += [(row["scheduled_offset_s"], 1, i, row) for i, row in enumerate(labelled)]
    return pa.Table.from_pylist([row for *_, row in sorted(keyed, key=lambda k: k[:3])], schema=REPLAY_PLAN_SCHEMA)


def with_mixed_accuracy(plan: pa.Table, spec: Spec, labelled_slice: Path) -> pa.Table:
    """With `accuracy.mode: mixed`, the labelled items placed among the planned requests; else the plan."""
    config = spec.accuracy
    if config is None or config.mode != "mixed":
        return plan
    return mix_into_plan(plan, pq.read_table(labelled_slice), config, spec.workload.prompts)
