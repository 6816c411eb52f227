"""Suites for what the replay sends and records: the replay plan, the raw timings (lifecycle
order, one row per planned request) and the endpoint's health during the run."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa


def replay_plan_suite(gx, params: dict) -> list:
    """Ids present and unique, offsets non-decreasing, max_tokens ≥ 1, prompt + max_tokens
    within the model's context."""
    e = gx.expectations
    expectations = [
        e.ExpectColumnValuesToNotBeNull(column="request_id"),
        e.ExpectColumnValuesToBeUnique(column="request_id"),
        e.ExpectColumnValuesToBeIncreasing(column="scheduled_offset_s", strictly=False),
        e.ExpectColumnValuesToBeBetween(column="max_tokens", min_value=1),
        e.ExpectTableRowCountToBeBetween(min_value=1),
    ]
    if params.get("max_context_tokens"):
        # prompt and requested output must fit the model's context window
        expectations.append(
            e.ExpectColumnValuesToBeBetween(column="context_tokens", max_value=params["max_context_tokens"])
        )
    return expectations


def replay_plan_frame(plan: pa.Table) -> pd.DataFrame:
    """The plan with `context_tokens` (prompt + max_tokens), which replay_plan_suite bounds."""
    frame = plan.to_pandas()
    frame["context_tokens"] = frame["prompt_tokens_client"] + frame["max_tokens"]
    return frame


LIFECYCLE = ("t_sent_ns", "t_first_byte_ns", "t_first_token_ns", "t_last_token_ns", "t_end_ns")


def raw_timings_suite(gx, params: dict) -> list:
    """One row per replayed request: status typed, an error names its type, the lifecycle in
    order (send ≤ first byte ≤ first token ≤ last token ≤ end, every pair of the stamps a row
    has), TTFT ≤ E2E, no negative duration, output tokens ≤ max_tokens."""
    e = gx.expectations
    pair = dict(or_equal=True, ignore_row_if="either_value_is_missing")
    ordered = [
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A=later, column_B=earlier, **pair)
        for i, earlier in enumerate(LIFECYCLE)
        for later in LIFECYCLE[i + 1 :]
    ]
    return [
        e.ExpectColumnValuesToBeInSet(column="status", value_set=["ok", "error"]),
        e.ExpectColumnValuesToNotBeNull(
            column="error_type", row_condition='status=="error"', condition_parser="pandas"
        ),
        *ordered,
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="e2e_ms", column_B="ttft_ms", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="max_tokens", column_B="output_tokens", **pair),
        *(e.ExpectColumnValuesToBeBetween(column=c, min_value=0) for c in ("ttft_ms", "tpot_ms", "e2e_ms")),
    ]


def raw_timings_complete_suite(gx, params: dict) -> list:
    """Exactly one row per planned request, candidate and run (`repeats`, default 1): as many rows
    as planned × candidates × runs, each a planned id of a named candidate in a run 0…N−1, no
    triple twice (so none is missing either)."""
    e = gx.expectations
    repeats = params.get("repeats", 1)
    per_run = [e.ExpectColumnValuesToBeInSet(column="repeat", value_set=list(range(repeats)))] if repeats > 1 else []
    return [
        e.ExpectTableRowCountToEqual(value=len(params["planned"]) * len(params["candidates"]) * repeats),
        e.ExpectColumnValuesToBeInSet(column="candidate", value_set=list(params["candidates"])),
        e.ExpectColumnValuesToBeInSet(column="request_id", value_set=list(params["planned"])),
        *per_run,
        e.ExpectCompoundColumnsToBeUnique(
            column_list=["candidate", "request_id", *(["repeat"] if repeats > 1 else [])]
        ),
    ]


def endpoint_health_suite(gx, params: dict) -> list:
    """Not about our numbers being wrong: about the endpoint and the client keeping up."""
    e = gx.expectations
    return [
        e.ExpectColumnValuesToBeInSet(column="status", value_set=["ok"], mostly=1.0 - params["max_error_rate"]),
        e.ExpectColumnQuantileValuesToBeBetween(
            column="schedule_lag_ms",
            quantile_ranges={"quantiles": [0.99], "value_ranges": [[None, params["max_schedule_lag_ms_p99"]]]},
        ),
    ]
