"""The accuracy and evidence-pack suites fail on crafted bad data and pass on good."""

import pandas as pd
import pyarrow as pa
import pytest

from pipeline.accuracy.scorers import ERROR, NO_ANSWER
from pipeline.contracts import ACCURACY_RESULTS_SCHEMA
from pipeline.quality import expectations as ex


def outcome(suite, frame, params=None):
    return ex.validate(suite, frame, params, name="t")


def failed(result) -> set[str]:
    return {item["expectation"] for item in result.metadata["failed"]}


def slice_frame(**columns) -> pd.DataFrame:
    base = {"item_id": ["1", "2", "3"], "label": ["card_arrival", "top_up", "card_arrival"]}
    base.update(columns)
    return pd.DataFrame(base)


def test_labelled_slice_suite():
    configured = {"configured": True, "labels": None}
    assert outcome(ex.labelled_slice_suite, slice_frame(), configured).passed
    assert outcome(
        ex.labelled_slice_suite, slice_frame(), {"configured": True, "labels": ["card_arrival", "top_up"]}
    ).passed
    assert outcome(ex.labelled_slice_suite, slice_frame().iloc[:0], {"configured": False}).passed
    assert failed(outcome(ex.labelled_slice_suite, slice_frame(), {"configured": False})) == {
        "expect_table_row_count_to_equal"
    }
    assert failed(outcome(ex.labelled_slice_suite, slice_frame(item_id=["1", "1", "3"]), configured)) == {
        "expect_column_values_to_be_unique"
    }
    assert failed(outcome(ex.labelled_slice_suite, slice_frame(label=["card_arrival", "", "top_up"]), configured)) == {
        "expect_column_value_lengths_to_be_between"
    }
    outside = outcome(ex.labelled_slice_suite, slice_frame(), {"configured": True, "labels": ["card_arrival"]})
    assert failed(outside) == {"expect_column_values_to_be_in_set"}
    assert outside.metadata["failed"][0]["unexpected_examples"] == ["top_up"]


PARAMS = {
    "items": ["1", "2"],
    "candidates": ["x", "y"],
    "labels": ["card_arrival", "top_up"],
    "closed_predictions": True,
}


def result(candidate, item, label, predicted, correct, status="ok") -> dict:
    return {
        "candidate": candidate,
        "item_id": item,
        "label": label,
        "predicted": predicted,
        "correct": correct,
        "status": status,
    }


def results(*rows) -> pa.Table:
    rows = rows or (
        result("x", "1", "card_arrival", "card_arrival", True),
        result("x", "2", "top_up", NO_ANSWER, False),
        result("y", "1", "card_arrival", "top_up", False),
        result("y", "2", "top_up", ERROR, False, status="error"),
    )
    return pa.Table.from_pylist(list(rows), schema=ACCURACY_RESULTS_SCHEMA)


def results_outcome(table: pa.Table, params=PARAMS):
    return outcome(ex.accuracy_results_suite, ex.accuracy_results_frame(table), params)


def test_accuracy_results_good():
    assert results_outcome(results()).passed
    empty = {"items": [], "candidates": [], "labels": [], "closed_predictions": False}
    assert results_outcome(results().slice(0, 0), empty).passed  # no slice configured
    free_text = results(result("x", "1", "card_arrival", "Card arrival!", True), *results().to_pylist()[1:])
    assert results_outcome(free_text, {**PARAMS, "closed_predictions": False}).passed  # normalised scorer


def replace(index: int, **changes) -> pa.Table:
    rows = results().to_pylist()
    rows[index] = {**rows[index], **changes}
    return pa.Table.from_pylist(rows, schema=ACCURACY_RESULTS_SCHEMA)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (results().slice(0, 3), {"expect_table_row_count_to_equal"}),  # y never answered item 2
        (replace(3, item_id="1"), {"expect_compound_columns_to_be_unique"}),  # y answered item 1 twice, item 2 never
        (replace(1, correct=None), {"expect_column_values_to_not_be_null"}),  # neither scored nor marked
        (replace(1, correct=True), {"expect_column_values_to_be_in_set"}),  # unscorable yet counted correct
        (replace(2, correct=True), {"expect_column_values_to_be_in_set"}),  # scored correct with another label
        (
            replace(3, predicted="top_up", correct=True),
            {"expect_column_values_to_be_in_set"},
        ),  # a failed request answered
        (replace(2, predicted="lost_card"), {"expect_column_values_to_be_in_set"}),  # a choice outside the label set
        (
            replace(0, label="lost_card", predicted="lost_card"),
            {"expect_column_values_to_be_in_set"},
        ),  # a label outside it
    ],
)
def test_accuracy_results_bad(table, expected):
    checked = results_outcome(table)
    assert not checked.passed and failed(checked) == expected


def proportions(value, low, high, n=10) -> pd.DataFrame:
    return pd.DataFrame({"scored": [n], "accuracy": [value], "accuracy_ci_low": [low], "accuracy_ci_high": [high]})


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        (proportions(0.8, 0.5, 0.95), set()),
        (proportions(None, None, None, n=0), set()),
        (proportions(None, None, None, n=5), {"expect_column_values_to_not_be_null"}),
        (proportions(0.8, 0.85, 0.95), {"expect_column_pair_values_a_to_be_greater_than_b"}),
        (proportions(1.0, 0.7, 1.2), {"expect_column_values_to_be_between"}),
    ],
)
def test_proportion_suite(frame, expected):
    checked = outcome(ex.proportion_suite, frame, {"column": "accuracy", "n": "scored"})
    assert failed(checked) == expected and checked.passed == (not expected)


def pack(*figures) -> dict:
    figures = figures or (
        {"candidate": "x", "metric": "accuracy", "measured": 0.9, "verdict": "inconclusive"},
        {"candidate": "x", "metric": "ttft_ms_p95", "measured": 200.0, "verdict": "holds"},
        {"candidate": "x", "metric": "ttft_ms_p50", "measured": 100.0, "verdict": None},  # not claimed
    )
    return {"claim": {"figures": {"accuracy": 0.92, "ttft_ms_p95": 250}}, "figures": list(figures)}


def claims_outcome(document: dict, candidates=("x",)):
    params = {"claims": len(document["claim"]["figures"]), "candidates": len(candidates)}
    return outcome(ex.claims_suite, ex.claims_frame(document, list(candidates)), params)


def test_claims_suite():
    assert claims_outcome(pack()).passed
    good = pack()["figures"]
    unmeasured = {**good[0], "measured": None, "verdict": None}
    assert failed(claims_outcome(pack(unmeasured, good[1]))) == {"expect_column_values_to_not_be_null"}
    unjudged = {**unmeasured, "reason": "no labelled slice", "verdict": "inconclusive", "setting_to_judge": "accuracy"}
    assert claims_outcome(pack(unjudged, good[1])).passed
    # a reason and no verdict: the claim is not accounted for, and the hint says so (not the log's column mapping)
    reason_only = claims_outcome(pack({**unjudged, "verdict": None}, good[1]))
    assert failed(reason_only) == {"expect_column_values_to_not_be_null"}
    assert "setting_to_judge" in reason_only.metadata["explanation"]
    assert "workload.source.columns" not in reason_only.metadata["explanation"]
    # a claim judged at one basis (the capacity) and shown unjudged at another (served demand) is accounted for
    served = {"candidate": "x", "metric": "ttft_ms_p95", "measured": 9.0, "verdict": None, "not_judged": "served"}
    assert claims_outcome(pack(good[0], served, good[1])).passed
    assert claims_outcome(pack(good[0], {**good[1], "verdict": "holds within tolerance"})).passed
    absent = {
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_not_be_null",
    }  # no figure, so no value either
    assert failed(claims_outcome(pack(good[1]))) == absent  # no accuracy figure at all
    assert failed(claims_outcome(pack(), candidates=("x", "y"))) == absent  # y has none
    no_verdict = {**good[1], "verdict": None}
    assert failed(claims_outcome(pack(good[0], no_verdict))) == {"expect_column_values_to_not_be_null"}
    assert failed(claims_outcome(pack(good[0], {**good[1], "verdict": "maybe"}))) == {
        "expect_column_values_to_be_in_set"
    }
