"""Suites for the decision tables computed from the raw timings (sql/*.sql).

Where a rule spans rows (percentiles of one series, rates of one candidate) or compares with a
product (tokens/s × window), a `*_frame` function derives the needed column first — the value of
the next-lower percentile, the rate × window rounded, the candidate's rate sum — so the suite
stays built-in expectations on one in-memory batch.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from pipeline.analysis.declare.metrics import PERCENTILES, metric, names

SUM_TOLERANCE = 1e-9  # shares that must add up to one, allowing for float summation
# every rate of the throughput table (the metric catalogue's)
RATES = tuple(name for name in names(kind="rate") if metric(name).source.table == "throughput")


def latency_percentiles_frame(table: pa.Table) -> pd.DataFrame:
    """The long table, each row with `lower_percentile_value`: its series' value at the
    next-lower percentile (null for the lowest)."""
    frame = table.to_pandas().sort_values(["candidate", "metric", "scope", "q"], kind="stable").reset_index(drop=True)
    frame["lower_percentile_value"] = frame.groupby(["candidate", "metric", "scope"])["value"].shift(1)
    return frame


def latency_percentiles_suite(gx, params: dict) -> list:
    """Per series (candidate, metric, scope): p50 ≤ p90 ≤ p95 ≤ p99 ≤ p99.9; each value inside
    its interval; no NaN or null value where the series has samples; one row per percentile."""
    e = gx.expectations
    pair = dict(or_equal=True, ignore_row_if="either_value_is_missing")
    return [
        e.ExpectTableRowCountToBeBetween(min_value=1),
        e.ExpectColumnValuesToBeInSet(column="q", value_set=list(PERCENTILES.values())),
        e.ExpectCompoundColumnsToBeUnique(column_list=["candidate", "metric", "scope", "q"]),
        e.ExpectColumnValuesToNotBeNull(column="value", row_condition="n > 0", condition_parser="pandas"),
        e.ExpectColumnValuesToBeBetween(column="value", min_value=0),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="value", column_B="lower_percentile_value", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="value", column_B="ci_low", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="ci_high", column_B="value", **pair),
    ]


def throughput_frame(table: pa.Table) -> pd.DataFrame:
    """The throughput table with each token rate × window rounded to whole tokens."""
    frame = table.to_pandas()
    for kind in ("output_tokens", "total_tokens"):
        frame[f"{kind}_from_rate"] = (frame[f"{kind}_per_s"] * frame["window_s"]).round()
    return frame


def throughput_suite(gx, params: dict) -> list:
    """No NaN or negative rate; goodput ≤ requests/s; tokens/s × window = the token sum (to the
    token); counts nested (good ≤ ok ≤ in window); fractions in [0, 1]."""
    e = gx.expectations
    pair = dict(or_equal=True, ignore_row_if="either_value_is_missing")
    return [
        e.ExpectTableRowCountToBeBetween(min_value=1),
        e.ExpectColumnValuesToBeUnique(column="candidate"),
        e.ExpectColumnValuesToBeBetween(column="window_s", min_value=0, strict_min=True),
        *(e.ExpectColumnValuesToNotBeNull(column=rate) for rate in RATES),
        *(e.ExpectColumnValuesToBeBetween(column=rate, min_value=0) for rate in RATES),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="requests_per_s", column_B="goodput_requests_per_s", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="output_tokens_per_s", column_B="goodput_output_tokens_per_s", **pair
        ),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="total_tokens_per_s", column_B="output_tokens_per_s", **pair
        ),
        *(
            e.ExpectColumnPairValuesToBeEqual(
                column_A=f"{kind}_from_rate", column_B=kind, ignore_row_if="either_value_is_missing"
            )
            for kind in ("output_tokens", "total_tokens")
        ),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="requests_ok", column_B="requests_good", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="requests_in_window", column_B="requests_ok", **pair),
        e.ExpectColumnValuesToBeBetween(column="sla_attainment", min_value=0, max_value=1),
        e.ExpectColumnValuesToBeBetween(column="error_rate", min_value=0, max_value=1),
    ]


def throughput_buckets_frame(table: pa.Table, ended: dict[str, int]) -> pd.DataFrame:
    """Buckets with `ended_in_buckets` (the candidate's ok + failed over all its buckets) and
    `ended_in_raw_timings` (its requests that have a send and an end time)."""
    frame = table.to_pandas()
    frame["ended_in_buckets"] = (
        (frame["requests_ok"] + frame["requests_failed"]).groupby(frame["candidate"]).transform("sum")
    )
    frame["ended_in_raw_timings"] = frame["candidate"].map(ended)
    return frame


def throughput_buckets_suite(gx, params: dict) -> list:
    """Every request that ended is counted in exactly one 1-second bucket of its candidate;
    every candidate with ended requests has buckets; counts nested and non-negative."""
    e = gx.expectations
    pair = dict(or_equal=True, ignore_row_if="either_value_is_missing")
    counts = ("requests_sent", "requests_ok", "requests_good", "requests_failed", "output_tokens", "total_tokens")
    return [
        e.ExpectTableRowCountToBeBetween(min_value=1),
        e.ExpectColumnDistinctValuesToEqualSet(column="candidate", value_set=params["candidates"]),
        e.ExpectCompoundColumnsToBeUnique(column_list=["candidate", "second"]),
        e.ExpectColumnPairValuesToBeEqual(column_A="ended_in_buckets", column_B="ended_in_raw_timings"),
        *(e.ExpectColumnValuesToBeBetween(column=c, min_value=0) for c in counts),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="requests_ok", column_B="requests_good", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="total_tokens", column_B="output_tokens", **pair),
    ]


def error_breakdown_frame(table: pa.Table) -> pd.DataFrame:
    """Outcomes with their candidate's rate sum and request sum."""
    frame = table.to_pandas()
    by_candidate = frame.groupby("candidate")
    frame["candidate_rate_sum"] = by_candidate["rate"].transform("sum")
    frame["candidate_requests_sum"] = by_candidate["requests"].transform("sum")
    return frame


def error_breakdown_suite(gx, params: dict) -> list:
    """Each candidate's outcome rates sum to one and its outcome counts to its planned requests;
    one row per outcome; 0 ≤ Wilson low ≤ rate ≤ Wilson high ≤ 1."""
    e = gx.expectations
    return [
        e.ExpectTableRowCountToBeBetween(min_value=1),
        e.ExpectCompoundColumnsToBeUnique(column_list=["candidate", "outcome"]),
        e.ExpectColumnValuesToNotBeNull(column="outcome"),
        e.ExpectColumnValuesToBeBetween(column="requests", min_value=1),
        e.ExpectColumnValuesToBeBetween(
            column="candidate_rate_sum", min_value=1 - SUM_TOLERANCE, max_value=1 + SUM_TOLERANCE
        ),
        e.ExpectColumnPairValuesToBeEqual(column_A="candidate_requests_sum", column_B="requests_planned"),
        *proportion_expectations(gx, "rate"),
    ]


def proportion_expectations(gx, name: str) -> list:
    """0 ≤ `{name}_ci_low` ≤ `name` ≤ `{name}_ci_high` ≤ 1 (a proportion and its Wilson interval)."""
    e = gx.expectations
    pair = dict(or_equal=True, ignore_row_if="either_value_is_missing")
    return [
        *(
            e.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=1)
            for c in (name, f"{name}_ci_low", f"{name}_ci_high")
        ),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A=name, column_B=f"{name}_ci_low", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A=f"{name}_ci_high", column_B=name, **pair),
    ]


def cost_per_decision_suite(gx, params: dict) -> list:
    """Cost present and non-negative for every candidate; per-decision cost inside its interval."""
    e = gx.expectations
    pair = dict(or_equal=True, ignore_row_if="either_value_is_missing")
    return [
        e.ExpectTableRowCountToBeBetween(min_value=1),
        e.ExpectColumnValuesToNotBeNull(column="cost_usd"),
        *(
            e.ExpectColumnValuesToBeBetween(column=c, min_value=0)
            for c in ("cost_usd", "cost_per_decision_usd", "cost_per_million_output_tokens_usd")
        ),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="cost_per_decision_usd", column_B="cost_per_decision_usd_ci_low", **pair
        ),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="cost_per_decision_usd_ci_high", column_B="cost_per_decision_usd", **pair
        ),
    ]
