"""great-expectations (1.x) suites run on in-memory pandas batches, one per guarded table.

`import great_expectations` costs ~5 s, so it happens inside `validate`, only when a check runs.
Each suite is a function of the `gx` module and the check's parameters returning expectations,
so the suites read as data and the import stays lazy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pandas as pd

FAILED_DETAIL_LIMIT = 10


@dataclass
class SuiteOutcome:
    passed: bool
    metadata: dict = field(default_factory=dict)


def canonical_log_suite(gx, params: dict) -> list:
    e = gx.expectations
    return [
        *(e.ExpectColumnToExist(column=c) for c in ("request_id", "arrival_at", "prompt_tokens", "output_tokens", "source_line")),
        e.ExpectColumnValuesToNotBeNull(column="arrival_at"),
        e.ExpectColumnValuesToBeIncreasing(column="arrival_at", strictly=False),
        e.ExpectColumnValuesToBeBetween(column="prompt_tokens", min_value=1),
        e.ExpectColumnValuesToBeBetween(column="output_tokens", min_value=1),
        e.ExpectTableRowCountToBeBetween(min_value=1),
    ]


def replay_plan_suite(gx, params: dict) -> list:
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


def raw_timings_suite(gx, params: dict) -> list:
    e = gx.expectations
    pair = dict(or_equal=True, ignore_row_if="either_value_is_missing")
    return [
        e.ExpectColumnValuesToBeInSet(column="status", value_set=["ok", "error"]),
        e.ExpectColumnValuesToNotBeNull(column="error_type", row_condition='status=="error"', condition_parser="pandas"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="t_first_token_ns", column_B="t_sent_ns", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="t_end_ns", column_B="t_last_token_ns", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="e2e_ms", column_B="ttft_ms", **pair),
        e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="max_tokens", column_B="output_tokens", **pair),
        e.ExpectColumnValuesToBeBetween(column="ttft_ms", min_value=0),
        e.ExpectColumnValuesToBeBetween(column="tpot_ms", min_value=0),
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


def validate(suite, frame: pd.DataFrame, params: dict | None = None, name: str = "suite") -> SuiteOutcome:
    """Run one suite on a pandas frame; metadata holds the statistics and each failed expectation."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    import great_expectations as gx

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = gx.data_context.types.base.ProgressBarsConfig(globally=False)
    batch = (
        context.data_sources.add_pandas("frames")
        .add_dataframe_asset(name)
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": frame})
    )
    suite_definition = gx.ExpectationSuite(name=name, expectations=suite(gx, params or {}))
    result = batch.validate(suite_definition)
    failed = [
        {
            "expectation": item.expectation_config.type,
            "kwargs": {k: v for k, v in item.expectation_config.kwargs.items() if k != "batch_id"},
            "unexpected_count": item.result.get("unexpected_count"),
            "observed_value": item.result.get("observed_value"),
        }
        for item in result.results
        if not item.success
    ]
    statistics = result.statistics
    return SuiteOutcome(
        passed=bool(result.success),
        metadata={
            "suite": name,
            "evaluated": statistics["evaluated_expectations"],
            "successful": statistics["successful_expectations"],
            "failed": failed[:FAILED_DETAIL_LIMIT],
        },
    )
