"""Each great-expectations suite fails on crafted bad data and passes on good."""

import pandas as pd
import pytest

from pipeline.quality import expectations as ex


def outcome(suite, frame, params=None):
    return ex.validate(suite, frame, params, name="t")


def failed(result) -> set[str]:
    return {item["expectation"] for item in result.metadata["failed"]}


def logs(**columns) -> pd.DataFrame:
    base = {
        "request_id": ["a", "b"],
        "arrival_at": pd.to_datetime(["2026-11-02T14:00:00Z", "2026-11-02T14:00:01Z"]),
        "prompt_tokens": [5, 6],
        "output_tokens": [7, 8],
        "source_line": [1, 2],
    }
    base.update(columns)
    return pd.DataFrame(base)


def test_canonical_log_suite():
    assert outcome(ex.canonical_log_suite, logs()).passed
    bad = outcome(
        ex.canonical_log_suite,
        logs(prompt_tokens=[0, 6], arrival_at=pd.to_datetime(["2026-11-02T14:00:01Z", "2026-11-02T14:00:00Z"])),
    )
    assert failed(bad) == {"expect_column_values_to_be_between", "expect_column_values_to_be_increasing"}


def plan(**columns) -> pd.DataFrame:
    base = {
        "request_id": ["a", "b"],
        "scheduled_offset_s": [0.0, 1.0],
        "max_tokens": [10, 20],
        "context_tokens": [100, 200],
    }
    base.update(columns)
    return pd.DataFrame(base)


def test_replay_plan_suite():
    assert outcome(ex.replay_plan_suite, plan(), {"max_context_tokens": 200}).passed
    assert failed(outcome(ex.replay_plan_suite, plan(request_id=["a", "a"]))) == {"expect_column_values_to_be_unique"}
    assert failed(outcome(ex.replay_plan_suite, plan(scheduled_offset_s=[1.0, 0.0]))) == {
        "expect_column_values_to_be_increasing"
    }
    too_long = outcome(ex.replay_plan_suite, plan(), {"max_context_tokens": 150})
    assert failed(too_long) == {"expect_column_values_to_be_between"}


def timings(**columns) -> pd.DataFrame:
    base = {
        "status": ["ok", "error"],
        "error_type": [None, "http_5xx"],
        "t_sent_ns": [0, 0],
        "t_first_byte_ns": [5, 4],
        "t_first_token_ns": [10, None],
        "t_last_token_ns": [20, None],
        "t_end_ns": [30, 5],
        "ttft_ms": [1e-5, None],
        "e2e_ms": [3e-5, None],
        "tpot_ms": [1e-6, None],
        "max_tokens": [8, 8],
        "output_tokens": [8, None],
        "usage_reported": [True, False],
        "schedule_lag_ms": [0.2, 0.3],
    }
    base.update(columns)
    return pd.DataFrame(base)


def test_raw_timings_suite():
    assert outcome(ex.raw_timings_suite, timings()).passed
    assert failed(outcome(ex.raw_timings_suite, timings(error_type=[None, None]))) == {
        "expect_column_values_to_not_be_null"
    }
    assert failed(outcome(ex.raw_timings_suite, timings(ttft_ms=[5e-5, None]))) == {
        "expect_column_pair_values_a_to_be_greater_than_b"
    }
    assert failed(outcome(ex.raw_timings_suite, timings(output_tokens=[9, None]))) == {
        "expect_column_pair_values_a_to_be_greater_than_b"
    }
    assert failed(outcome(ex.raw_timings_suite, timings(status=["ok", "oops"]))) == {
        "expect_column_values_to_be_in_set"
    }
    # the first byte after the first token, and (on the failed request, no token) after the end
    assert failed(outcome(ex.raw_timings_suite, timings(t_first_byte_ns=[15, 6]))) == {
        "expect_column_pair_values_a_to_be_greater_than_b"
    }
    late_byte = outcome(ex.raw_timings_suite, timings(t_first_byte_ns=[5, 6]))
    assert failed(late_byte) == {"expect_column_pair_values_a_to_be_greater_than_b"}
    assert late_byte.metadata["failed"][0]["kwargs"]["column_A"] == "t_end_ns"
    assert failed(outcome(ex.raw_timings_suite, timings(tpot_ms=[-1e-6, None]))) == {
        "expect_column_values_to_be_between"
    }


def test_raw_timings_complete_suite():
    params = {"planned": ["a", "b"], "candidates": ["x", "y"]}
    good = pd.DataFrame({"candidate": ["x", "x", "y", "y"], "request_id": ["a", "b", "b", "a"]})
    assert outcome(ex.raw_timings_complete_suite, good, params).passed
    missing = outcome(ex.raw_timings_complete_suite, good.iloc[:3], params)
    assert failed(missing) == {"expect_table_row_count_to_equal"}
    doubled = good.assign(request_id=["a", "b", "b", "b"])
    assert failed(outcome(ex.raw_timings_complete_suite, doubled, params)) == {"expect_compound_columns_to_be_unique"}
    unplanned = good.assign(request_id=["a", "b", "b", "z"])
    assert failed(outcome(ex.raw_timings_complete_suite, unplanned, params)) == {"expect_column_values_to_be_in_set"}


def test_production_sample_suite():
    params = {"max_requests": 3, "window_s": 60.0}
    good = pd.DataFrame({"window_offset_s": [0.0, 30.0, 59.9]})
    assert outcome(ex.production_sample_suite, good, params).passed
    assert outcome(
        ex.production_sample_suite, good.assign(window_offset_s=[0.0, 30.0, 600.0]), {**params, "window_s": None}
    ).passed
    at_end = outcome(ex.production_sample_suite, good.assign(window_offset_s=[0.0, 30.0, 60.0]), params)
    assert failed(at_end) == {"expect_column_values_to_be_between"}
    assert failed(outcome(ex.production_sample_suite, good, {**params, "max_requests": 2})) == {
        "expect_table_row_count_to_be_between"
    }
    assert failed(outcome(ex.production_sample_suite, good.iloc[:0], params)) == {
        "expect_table_row_count_to_be_between"
    }


def representativeness_tests(*p_values) -> pd.DataFrame:
    columns = ["prompt_tokens", "output_tokens", "tenant", "route"][: len(p_values)]
    return pd.DataFrame({"test": "ks_2samp", "column": columns, "statistic": 0.1, "p_value": list(p_values)})


def test_representativeness_suite():
    params = {"alpha_per_test": 0.01 / 3}
    assert outcome(ex.representativeness_suite, representativeness_tests(0.5, 0.2, 0.9), params).passed
    skewed = outcome(ex.representativeness_suite, representativeness_tests(0.5, 0.001, 0.9), params)
    assert failed(skewed) == {"expect_column_values_to_be_between"}
    assert skewed.metadata["failed"][0]["unexpected_examples"] == [0.001]
    assert failed(outcome(ex.representativeness_suite, representativeness_tests(0.5, None, 0.9), params)) == {
        "expect_column_values_to_not_be_null"
    }


@pytest.mark.parametrize(
    ("max_error_rate", "lag_bound", "expected"),
    [
        (0.5, 1.0, set()),
        (0.1, 1.0, {"expect_column_values_to_be_in_set"}),
        (0.5, 0.1, {"expect_column_quantile_values_to_be_between"}),
    ],
)
def test_endpoint_health_suite(max_error_rate, lag_bound, expected):
    result = outcome(
        ex.endpoint_health_suite, timings(), {"max_error_rate": max_error_rate, "max_schedule_lag_ms_p99": lag_bound}
    )
    assert failed(result) == expected and result.passed == (not expected)


def test_failure_detail_names_a_missing_column_and_summarises_long_value_sets():
    missing = outcome(ex.production_sample_suite, pd.DataFrame({"other": [1.0]}), {"max_requests": 3, "window_s": 60.0})
    assert not missing.passed
    assert all("window_offset_s" in item["exception"] for item in missing.metadata["failed"])
    planned = [f"r{i}" for i in range(50)]
    extra = outcome(
        ex.raw_timings_complete_suite,
        pd.DataFrame({"candidate": ["x"], "request_id": ["zz"]}),
        {"planned": planned, "candidates": ["x"]},
    )
    in_set = next(
        item for item in extra.metadata["failed"] if item["expectation"] == "expect_column_values_to_be_in_set"
    )
    assert in_set["kwargs"]["value_set"][-1] == "… 40 more" and in_set["unexpected_examples"] == ["zz"]
