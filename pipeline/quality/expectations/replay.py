"""Suites for what the replay sends and records: the replay plan, the raw timings (lifecycle
order, one row per planned request) and the endpoint's health during the run."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa

from pipeline.quality.expectations.runner import with_frame


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


# How far above max_tokens a reply's count may sit, by `output_tokens_source`, before the raw
# timings are wrong rather than the count approximate (a check must never fail a run because of
# the client's own approximation):
# - `usage`: the server's own count — exact;
# - `chunks`: content chunks carry at least one token each — a lower bound, so exact too;
# - `tokenizer:<name>`: the real tokenizer over the decoded reply — re-tokenising text can merge or
#   split differently from generation, and a reply cut mid-character decodes to a replacement
#   character: RETOKENISED_SLACK_SHARE of max_tokens plus RETOKENISED_SLACK_TOKENS;
# - anything else (`approx`, and a NULL source without usage in older files, whose count was
#   loadproof-approx's words and punctuation marks): no bound at all — the row is not checked.
RETOKENISED_SLACK_SHARE = 0.01
RETOKENISED_SLACK_TOKENS = 2


def output_tokens_slack(source: str | None, usage_reported: bool | None, max_tokens: int) -> float | None:
    """Tokens allowed above max_tokens for a count of that source (above); None: not checked."""
    if source in ("usage", "chunks") or (source is None and usage_reported):
        return 0.0
    if source is not None and source.startswith("tokenizer:"):
        return math.ceil(RETOKENISED_SLACK_SHARE * max_tokens) + RETOKENISED_SLACK_TOKENS
    return None


def raw_timings_frame(table: pa.Table | pd.DataFrame) -> pd.DataFrame:
    """The raw timings with `output_tokens_allowed` (max_tokens plus its source's slack; NULL where
    the count has no bound), which raw_timings_suite compares output_tokens with."""
    frame = table.to_pandas() if isinstance(table, pa.Table) else table.copy()
    sources = frame["output_tokens_source"] if "output_tokens_source" in frame else [None] * len(frame)
    reported = frame["usage_reported"] if "usage_reported" in frame else [None] * len(frame)
    allowed = []
    for source, usage, max_tokens in zip(sources, reported, frame["max_tokens"]):
        slack = None if pd.isna(max_tokens) else output_tokens_slack(_or_none(source), _or_none(usage), max_tokens)
        allowed.append(None if slack is None else float(max_tokens) + slack)
    frame["output_tokens_allowed"] = pd.Series(allowed, index=frame.index, dtype="Float64")
    return frame


def _or_none(value):
    return None if value is None or pd.isna(value) else value


LIFECYCLE = ("t_sent_ns", "t_first_byte_ns", "t_first_token_ns", "t_last_token_ns", "t_end_ns")


@with_frame(raw_timings_frame)
def raw_timings_suite(gx, params: dict) -> list:
    """One row per replayed request: status typed, an error names its type, the lifecycle in
    order (send ≤ first byte ≤ first token ≤ last token ≤ end, every pair of the stamps a row
    has), TTFT ≤ E2E, no negative duration, output tokens ≤ max_tokens (within the uncertainty of
    how they were counted: `raw_timings_frame`, which `validate` applies first)."""
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
        # output ≤ max_tokens, within the count's own uncertainty (raw_timings_frame)
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="output_tokens_allowed", column_B="output_tokens", **pair),
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
