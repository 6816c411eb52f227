"""Suites for the buyer's labelled slice and the scored replies (pipeline/accuracy/labelled_slice.py)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from pipeline.accuracy.scorers import AMBIGUOUS, ERROR, NO_ANSWER, normalise
from pipeline.quality.expectations.tables import proportion_expectations

UNSCORABLE = (NO_ANSWER, AMBIGUOUS, ERROR)  # a reply that names no label, several, or none came back


def labelled_slice_suite(gx, params: dict) -> list:
    """No slice unless configured; a configured one has items, unique ids, a label on each and,
    where the spec lists the labels, only those."""
    e = gx.expectations
    if not params["configured"]:
        return [e.ExpectTableRowCountToEqual(value=0)]
    expectations = [
        e.ExpectTableRowCountToBeBetween(min_value=1),
        e.ExpectColumnValuesToNotBeNull(column="item_id"),
        e.ExpectColumnValuesToBeUnique(column="item_id"),
        e.ExpectColumnValuesToNotBeNull(column="label"),
        e.ExpectColumnValueLengthsToBeBetween(column="label", min_value=1),
    ]
    if params.get("labels"):
        expectations.append(e.ExpectColumnValuesToBeInSet(column="label", value_set=params["labels"]))
    return expectations


def accuracy_results_frame(results: pa.Table) -> pd.DataFrame:
    """Scored replies with `unscorable` (the prediction is a marker, not an answer) and
    `predicted_is_label` (prediction and label equal, normalised)."""
    frame = results.to_pandas()
    predicted, label = frame["predicted"].fillna(""), frame["label"].fillna("")
    frame["unscorable"] = predicted.isin(UNSCORABLE)
    frame["predicted_is_label"] = [normalise(p) == normalise(t) for p, t in zip(predicted, label)]
    return frame


def accuracy_results_suite(gx, params: dict) -> list:
    """One row per slice item and candidate; every row scored (correct true or false) or marked
    unscorable (and then wrong); labels within the label set, and, for the choice scorer,
    predictions too; a reply scored correct names its label; a failed request is an error."""
    e = gx.expectations
    labels = list(params["labels"])
    expectations = [
        e.ExpectTableRowCountToEqual(value=len(params["items"]) * len(params["candidates"])),
        e.ExpectColumnValuesToBeInSet(column="candidate", value_set=list(params["candidates"])),
        e.ExpectColumnValuesToBeInSet(column="item_id", value_set=list(params["items"])),
        e.ExpectCompoundColumnsToBeUnique(column_list=["candidate", "item_id"]),
        e.ExpectColumnValuesToBeInSet(column="status", value_set=["ok", "error"]),
        e.ExpectColumnValuesToNotBeNull(column="correct"),
        e.ExpectColumnValuesToNotBeNull(column="predicted"),
        e.ExpectColumnValuesToBeInSet(column="label", value_set=labels),
        e.ExpectColumnValuesToBeInSet(
            column="predicted", value_set=[ERROR], row_condition='status == "error"', condition_parser="pandas"
        ),
        e.ExpectColumnValuesToBeInSet(
            column="correct", value_set=[False], row_condition="unscorable == True", condition_parser="pandas"
        ),
        e.ExpectColumnValuesToBeInSet(
            column="predicted_is_label", value_set=[True], row_condition="correct == True", condition_parser="pandas"
        ),
    ]
    if params.get("closed_predictions"):  # the choice scorer answers with a label or a marker
        expectations.append(e.ExpectColumnValuesToBeInSet(column="predicted", value_set=labels + list(UNSCORABLE)))
    return expectations


def proportion_suite(gx, params: dict) -> list:
    """A proportion column (`params['column']`) and its Wilson interval: 0 ≤ low ≤ value ≤ high ≤ 1;
    the proportion is present wherever its denominator (`params['n']`) is positive."""
    e = gx.expectations
    return [
        e.ExpectColumnValuesToNotBeNull(
            column=params["column"], row_condition=f"{params['n']} > 0", condition_parser="pandas"
        ),
        *proportion_expectations(gx, params["column"]),
    ]
