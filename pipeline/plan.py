"""The replay plan: what to send and when, computed up front from the production sample."""

from __future__ import annotations

import json
import random

import pyarrow as pa

from pipeline import arrivals
from pipeline.replay.engine import PlannedRequest
from pipeline.tokens import count_message_tokens

PLAN_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),
        ("scheduled_offset_s", pa.float64()),
        ("messages_json", pa.string()),
        ("max_tokens", pa.int64()),
        ("prompt_tokens_logged", pa.int64()),
        ("prompt_tokens_client", pa.int64()),
        ("source_line", pa.int64()),
    ]
)

_FILLER = "account card transfer payment balance statement branch limit fee refund".split()


def synthetic_messages(prompt_tokens: int, seed: str) -> list[dict]:
    """A stand-in prompt of about `prompt_tokens` tokens for logs that carry counts but no text."""
    rng = random.Random(seed)
    words = [rng.choice(_FILLER) for _ in range(max(1, prompt_tokens - 1))]
    return [{"role": "user", "content": " ".join(words)}]


def planned_offsets(sample: pa.Table, replay) -> list[float | None]:
    """trace: the logged offsets × time_scale; rate: a seeded synthetic process; concurrency:
    none (the order is the log's and each request goes when a worker is free)."""
    if replay.mode == "trace":
        return arrivals.scaled_trace(sample.column("window_offset_s").to_pylist(), replay.time_scale)
    if replay.mode == "rate":
        return arrivals.synthetic(
            sample.num_rows, replay.rate_per_s, replay.arrival, replay.seed, replay.burstiness, replay.ramp_up_s
        )
    return [None] * sample.num_rows


def build_plan(sample: pa.Table, replay) -> pa.Table:
    """One planned request per sampled request, in the log's order, with its planned offset."""
    rows = []
    for record, offset in zip(sample.to_pylist(), planned_offsets(sample, replay)):
        messages = (
            json.loads(record["messages_json"])
            if record["messages_json"]
            else synthetic_messages(record["prompt_tokens"], record["request_id"])
        )
        rows.append(
            {
                "request_id": record["request_id"],
                "scheduled_offset_s": offset,
                "messages_json": json.dumps(messages, ensure_ascii=False),
                "max_tokens": record["output_tokens"],
                "prompt_tokens_logged": record["prompt_tokens"],
                "prompt_tokens_client": count_message_tokens(messages),
                "source_line": record["source_line"],
            }
        )
    return pa.Table.from_pylist(rows, schema=PLAN_SCHEMA)


def planned_requests(plan: pa.Table) -> list[PlannedRequest]:
    return [
        PlannedRequest(
            request_id=row["request_id"],
            scheduled_offset_s=row["scheduled_offset_s"],
            messages=json.loads(row["messages_json"]),
            max_tokens=row["max_tokens"],
            prompt_tokens_client=row["prompt_tokens_client"],
        )
        for row in plan.to_pylist()
    ]
