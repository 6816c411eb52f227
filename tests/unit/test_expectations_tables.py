"""Each analysis-table suite fails on crafted bad data and passes on good."""

import pyarrow as pa
import pytest

from pipeline.quality import expectations as ex

QS = (0.5, 0.9, 0.95, 0.99, 0.999)


def outcome(suite, frame, params=None):
    return ex.validate(suite, frame, params, name="t")


def failed(result) -> set[str]:
    return {item["expectation"] for item in result.metadata["failed"]}


def latency(values, ci=None, n=100, scope="all") -> pa.Table:
    ci = ci or [(None, None)] * len(values)
    rows = [
        {
            "candidate": "x",
            "metric": "ttft_ms",
            "scope": scope,
            "q": q,
            "n": n,
            "value": v,
            "ci_low": low,
            "ci_high": high,
        }
        for q, v, (low, high) in zip(QS, values, ci)
    ]
    schema = pa.schema(
        [
            ("candidate", pa.string()),
            ("metric", pa.string()),
            ("scope", pa.string()),
            ("q", pa.float64()),
            ("n", pa.int64()),
            ("value", pa.float64()),
            ("ci_low", pa.float64()),
            ("ci_high", pa.float64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def latency_outcome(table: pa.Table):
    return outcome(ex.latency_percentiles_suite, ex.latency_percentiles_frame(table))


def test_latency_percentiles_good():
    intervals = [(0.5, 1.5), (1.5, 2.5), (2.5, 3.5), (3.5, None), (None, None)]
    assert latency_outcome(latency([1, 2, 3, 4, 5], intervals)).passed
    # series are ordered independently of each other, whatever the row order in the file
    two = pa.concat_tables([latency([10, 20, 30, 40, 50], scope="bucket"), latency([1, 2, 3, 4, 5])])
    assert latency_outcome(two.take([9, 0, 5, 4, 1, 8, 2, 7, 3, 6])).passed


@pytest.mark.parametrize(
    ("values", "ci", "expected"),
    [
        ([1, 3, 2, 4, 5], None, {"expect_column_pair_values_a_to_be_greater_than_b"}),  # p95 below p90
        ([1, 2, 3, 4, 3.9], None, {"expect_column_pair_values_a_to_be_greater_than_b"}),  # p99.9 below p99
        (
            [1, 2, 3, 4, 5],
            [(5, 9)] + [(None, None)] * 4,
            {"expect_column_pair_values_a_to_be_greater_than_b"},
        ),  # outside its interval
        ([1, 2, float("nan"), 4, 5], None, {"expect_column_values_to_not_be_null"}),
        ([-1, 2, 3, 4, 5], None, {"expect_column_values_to_be_between"}),
    ],
)
def test_latency_percentiles_bad(values, ci, expected):
    result = latency_outcome(latency(values, ci))
    assert not result.passed and failed(result) == expected


def test_latency_percentiles_no_value_without_samples_is_fine():
    assert latency_outcome(latency([None] * 5, n=0)).passed
    assert failed(latency_outcome(latency([None] * 5, n=3))) == {"expect_column_values_to_not_be_null"}


def throughput(**overrides) -> pa.Table:
    row = {
        "candidate": "x",
        "window_s": 10.0,
        "output_tokens": 100,
        "total_tokens": 130,
        "output_tokens_per_s": 10.0,
        "total_tokens_per_s": 13.0,
        "requests_per_s": 1.0,
        "goodput_requests_per_s": 0.5,
        "goodput_output_tokens_per_s": 5.0,
        "requests_in_window": 11,
        "requests_ok": 10,
        "requests_good": 5,
        "sla_attainment": 5 / 11,
        "error_rate": 0.1,
    }
    row.update(overrides)
    return pa.Table.from_pylist([row])


def throughput_outcome(table: pa.Table):
    return outcome(ex.throughput_suite, ex.throughput_frame(table))


def test_throughput_good():
    assert throughput_outcome(throughput()).passed
    # rates are stored rounded to the float: 1/3 token/s × 3 s is 1 token within rounding
    assert throughput_outcome(
        throughput(
            window_s=3.0, output_tokens=1, output_tokens_per_s=1 / 3, goodput_output_tokens_per_s=1 / 3, total_tokens=39
        )
    ).passed


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"goodput_requests_per_s": 2.0}, {"expect_column_pair_values_a_to_be_greater_than_b"}),
        ({"goodput_output_tokens_per_s": 11.0}, {"expect_column_pair_values_a_to_be_greater_than_b"}),
        ({"output_tokens": 90}, {"expect_column_pair_values_to_be_equal"}),  # 10 tokens/s × 10 s ≠ 90
        ({"requests_per_s": float("nan")}, {"expect_column_values_to_not_be_null"}),
        (
            {"total_tokens_per_s": -1.0},
            {
                "expect_column_values_to_be_between",
                "expect_column_pair_values_a_to_be_greater_than_b",
                "expect_column_pair_values_to_be_equal",
            },
        ),
        (
            {"requests_good": 12, "sla_attainment": 12 / 11},
            {"expect_column_pair_values_a_to_be_greater_than_b", "expect_column_values_to_be_between"},
        ),
    ],
)
def test_throughput_bad(overrides, expected):
    result = throughput_outcome(throughput(**overrides))
    assert not result.passed and failed(result) == expected


def buckets(ok=(3, 2), failed_=(0, 1), candidate="x") -> pa.Table:
    rows = [
        {
            "candidate": candidate,
            "second": i,
            "requests_sent": 3,
            "requests_ok": o,
            "requests_good": o,
            "requests_failed": f,
            "output_tokens": 10 * o,
            "total_tokens": 15 * o,
        }
        for i, (o, f) in enumerate(zip(ok, failed_))
    ]
    return pa.Table.from_pylist(rows)


def buckets_outcome(table: pa.Table, ended: dict):
    return outcome(
        ex.throughput_buckets_suite, ex.throughput_buckets_frame(table, ended), {"candidates": sorted(ended)}
    )


def test_throughput_buckets():
    both = pa.concat_tables([buckets(), buckets(ok=(1,), failed_=(0,), candidate="y")])
    assert buckets_outcome(both, {"x": 6, "y": 1}).passed
    assert failed(buckets_outcome(both, {"x": 7, "y": 1})) == {
        "expect_column_pair_values_to_be_equal"
    }  # one request in no bucket
    assert failed(buckets_outcome(buckets(), {"x": 6, "y": 1})) == {
        "expect_column_distinct_values_to_equal_set"
    }  # y has no buckets
    doubled = pa.concat_tables([buckets(), buckets(ok=(0,), failed_=(0,))])  # second 0 twice
    assert failed(buckets_outcome(doubled, {"x": 6})) == {"expect_compound_columns_to_be_unique"}


def errors(rates=(0.9, 0.1), requests=(9, 1), planned=10, ci=((0.6, 0.98), (0.02, 0.4))) -> pa.Table:
    rows = [
        {
            "candidate": "x",
            "outcome": outcome_,
            "requests": n,
            "requests_planned": planned,
            "rate": rate,
            "rate_ci_low": low,
            "rate_ci_high": high,
        }
        for outcome_, n, rate, (low, high) in zip(("ok", "timeout"), requests, rates, ci)
    ]
    return pa.Table.from_pylist(rows)


def errors_outcome(table: pa.Table):
    return outcome(ex.error_breakdown_suite, ex.error_breakdown_frame(table))


def test_error_breakdown():
    assert errors_outcome(errors()).passed
    assert failed(errors_outcome(errors(rates=(0.9, 0.2)))) == {"expect_column_values_to_be_between"}
    assert failed(errors_outcome(errors(planned=11))) == {"expect_column_pair_values_to_be_equal"}
    outside = errors(ci=((0.6, 0.98), (0.2, 0.4)))  # rate 0.1 below its interval's low end
    assert failed(errors_outcome(outside)) == {"expect_column_pair_values_a_to_be_greater_than_b"}


def cost(**overrides) -> pa.Table:
    row = {
        "candidate": "x",
        "cost_usd": 0.1,
        "cost_per_decision_usd": 0.01,
        "cost_per_million_output_tokens_usd": 5.0,
        "cost_per_decision_usd_ci_low": 0.008,
        "cost_per_decision_usd_ci_high": 0.012,
    }
    row.update(overrides)
    return pa.Table.from_pylist([row]).to_pandas()


def test_cost_per_decision():
    assert outcome(ex.cost_per_decision_suite, cost()).passed
    assert outcome(
        ex.cost_per_decision_suite, cost(cost_per_decision_usd=None, cost_per_decision_usd_ci_low=None)
    ).passed  # no useful decision
    assert failed(outcome(ex.cost_per_decision_suite, cost(cost_usd=-0.1))) == {"expect_column_values_to_be_between"}
    assert failed(outcome(ex.cost_per_decision_suite, cost(cost_usd=None))) == {"expect_column_values_to_not_be_null"}
    assert failed(outcome(ex.cost_per_decision_suite, cost(cost_per_decision_usd=0.02))) == {
        "expect_column_pair_values_a_to_be_greater_than_b"
    }
