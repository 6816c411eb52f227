"""A failed suite explains itself (issue 16, item 7): each failing expectation in words with its
count of failing rows, up to five example rows by id with the checked values (never prompt or
reply text), and what the user can do; built from great-expectations' own result."""

import pandas as pd
import pyarrow as pa

from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.quality import expectations as ex
from pipeline.quality.expectations import explain
from tests.support.raw_timings import MS, S, timing


def bad_raw_timings(rows: int = 20, early: tuple[int, ...] = (3, 7, 11)) -> pd.DataFrame:
    """Real raw-timing rows (the replay's record builder), three with a first token stamped before
    the send: a clock that went backwards between shards."""
    records = [timing(f"q{i}", i * S, 20 * MS, 200 * MS, tokens=5) for i in range(rows)]
    for i in early:
        records[i]["t_first_token_ns"] = records[i]["t_sent_ns"] - 1_000
    return pa.Table.from_pylist(records, schema=RAW_TIMING_RECORD_SCHEMA).to_pandas()


def test_a_failed_expectation_says_what_how_many_which_rows_and_what_to_do():
    outcome = ex.validate(ex.raw_timings_suite, bad_raw_timings(), name="raw_timings")
    assert not outcome.passed
    failures = {
        (f["kwargs"]["column_A"], f["kwargs"]["column_B"]): f
        for f in outcome.metadata["failed"]
        if f["expectation"] == "expect_column_pair_values_a_to_be_greater_than_b"
    }
    first_token = failures[("t_first_token_ns", "t_sent_ns")]
    assert first_token["what"] == "t_first_token_ns ≥ t_sent_ns: 3 of 20 rows fail"
    assert first_token["unexpected_count"] == 3
    assert [row["request_id"] for row in first_token["examples"]] == ["q3", "q7", "q11"]
    assert first_token["examples"][0] == {
        "candidate": "c",
        "request_id": "q3",
        "t_first_token_ns": 3 * S - 1_000,
        "t_sent_ns": 3 * S,
    }
    assert "clock" in first_token["hint"]
    lines = outcome.metadata["explanation"].splitlines()
    line = next(line for line in lines if line.startswith("t_first_token_ns ≥ t_sent_ns"))
    assert "3 of 20 rows fail" in line and "request_id=q3" in line and "What to do:" in line


def test_at_most_five_examples_and_text_is_withheld():
    frame = pd.DataFrame(
        {
            "request_id": [f"r{i}" for i in range(9)],
            "reply": ["the customer's private words"] * 9,
            "status": ["bad"] * 9,
        }
    )

    def suite(gx, params):
        e = gx.expectations
        return [
            e.ExpectColumnValuesToBeInSet(column="status", value_set=["ok"]),
            e.ExpectColumnValuesToBeInSet(column="reply", value_set=["x"]),
        ]

    failed = ex.validate(suite, frame, name="t").metadata["failed"]
    status, reply = failed
    assert status["what"] == "status is one of ['ok']: 9 of 9 rows fail"
    assert [row["request_id"] for row in status["examples"]] == ["r0", "r1", "r2", "r3", "r4"]
    assert all(row["reply"] == explain.WITHHELD for row in reply["examples"])
    assert "private" not in ex.validate(suite, frame, name="t").metadata["explanation"]


def test_a_table_level_failure_names_what_was_observed():
    frame = pd.DataFrame({"candidate": ["x"], "request_id": ["a"]})
    outcome = ex.validate(ex.raw_timings_complete_suite, frame, {"planned": ["a", "b"], "candidates": ["x"]})
    row_count = next(f for f in outcome.metadata["failed"] if f["expectation"] == "expect_table_row_count_to_equal")
    assert row_count["what"] == "the table has 2 rows: observed 1"
    assert "interrupted" in row_count["hint"]


def test_a_quantile_bound_reads_as_figures_not_as_a_python_dict():
    records = [
        timing(f"q{i}", i * S, 20 * MS, 200 * MS, tokens=5, late_ns=(30 if i % 2 else 1) * MS) for i in range(20)
    ]
    frame = pa.Table.from_pylist(records, schema=RAW_TIMING_RECORD_SCHEMA).to_pandas()
    outcome = ex.validate(ex.endpoint_health_suite, frame, {"max_error_rate": 0.5, "max_schedule_lag_ms_p99": 10.0})
    lag = next(f for f in outcome.metadata["failed"] if "schedule_lag_ms" in f["what"])
    assert lag["what"] == "p99 of schedule_lag_ms ≤ 10.0: observed p99 = 30"
