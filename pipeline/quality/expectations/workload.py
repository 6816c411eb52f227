"""Suites for the workload stage's tables: the canonical log, the production sample and its
representativeness tests."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

LOG_ORDER_MOSTLY = 0.99  # a log whose timestamps step back on more than 1 % of lines is suspect


def canonical_log_suite(gx, params: dict) -> list:
    """The canonical log in its own order (file, line): timestamps present and (mostly) monotonic,
    token counts ≥ 1, ids present."""
    e = gx.expectations
    return [
        *(
            e.ExpectColumnToExist(column=c)
            for c in ("request_id", "arrival_at", "prompt_tokens", "output_tokens", "source_line")
        ),
        e.ExpectColumnValuesToNotBeNull(column="request_id"),
        e.ExpectColumnValuesToNotBeNull(column="arrival_at"),
        e.ExpectColumnValuesToBeIncreasing(column="arrival_at", strictly=False, mostly=LOG_ORDER_MOSTLY),
        e.ExpectColumnValuesToBeBetween(column="prompt_tokens", min_value=1),
        e.ExpectColumnValuesToBeBetween(column="output_tokens", min_value=1),
        e.ExpectTableRowCountToBeBetween(min_value=1),
    ]


def canonical_log_frame(log: pa.Table) -> pd.DataFrame:
    """The log's rows in its own order (file, line), the order canonical_log_suite judges."""
    return log.to_pandas().sort_values(["source_file", "source_line"], kind="stable").reset_index(drop=True)


def production_sample_suite(gx, params: dict) -> list:
    """Size within (0, max_requests]; every request inside the sampled window [0, window_s)
    (a stratified draw has no window: offsets only non-negative)."""
    e = gx.expectations
    window_s = params.get("window_s")
    return [
        e.ExpectTableRowCountToBeBetween(min_value=1, max_value=params["max_requests"]),
        e.ExpectColumnValuesToNotBeNull(column="window_offset_s"),
        e.ExpectColumnValuesToBeBetween(
            column="window_offset_s", min_value=0, max_value=window_s, strict_max=window_s is not None
        ),
    ]


def representativeness_suite(gx, params: dict) -> list:
    """The sample against the whole log, one row per test (pipeline.workload.sampling.representativeness:
    KS on prompt and output lengths, χ² on tenant and route): every p-value present and at least
    the Bonferroni level alpha / tests."""
    e = gx.expectations
    return [
        e.ExpectColumnValuesToBeInSet(column="column", value_set=["prompt_tokens", "output_tokens", "tenant", "route"]),
        e.ExpectColumnValuesToNotBeNull(column="p_value"),
        e.ExpectColumnValuesToBeBetween(column="p_value", min_value=params["alpha_per_test"], max_value=1),
        e.ExpectTableRowCountToBeBetween(min_value=2),
    ]
