"""The replay plan: what to send and when, computed up front from the production sample."""

from __future__ import annotations

import json
import random

import pyarrow as pa

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


def build_plan(sample: pa.Table, mode: str) -> pa.Table:
    """One planned request per sampled request; open-loop offsets come from the log itself.

    In closed-loop (`concurrency`) mode there are no planned offsets: the order is the log's
    and each request is sent when a worker is free.
    """
    rows = []
    for record in sample.to_pylist():
        messages = (
            json.loads(record["messages_json"])
            if record["messages_json"]
            else synthetic_messages(record["prompt_tokens"], record["request_id"])
        )
        rows.append(
            {
                "request_id": record["request_id"],
                "scheduled_offset_s": record["window_offset_s"] if mode == "trace" else None,
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
