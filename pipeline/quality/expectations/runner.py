"""Run one great-expectations (1.x) suite on an in-memory pandas batch.

`import great_expectations` costs ~5 s, so it happens inside `validate`, only when a check runs.
Each suite is a function of the `gx` module and the check's parameters returning expectations,
so the suites read as data and the import stays lazy. A failed expectation comes back in words
(`explain`): how many rows fail, example rows by id (`explain.ID_COLUMNS`, asked of
great-expectations as the unexpected rows' index columns) and what the user can do.
"""

from __future__ import annotations

import os

import pandas as pd

from pipeline.quality.expectations import explain
from pipeline.quality.outcome import Outcome

FAILED_DETAIL_LIMIT = 10
UNEXPECTED_SHOWN = 5
KWARG_ITEMS_SHOWN = 10  # a long value set (every item id of a slice) is summarised, not copied


def with_frame(prepare):
    """Marks a suite whose expectations read columns derived from the table (`prepare`: the frame
    with them added): `validate` prepares the frame first, whichever check or test calls it."""

    def mark(suite):
        suite.prepare_frame = prepare
        return suite

    return mark


def validate(suite, frame: pd.DataFrame, params: dict | None = None, name: str = "suite") -> Outcome:
    """Run one suite on a pandas frame; metadata holds the statistics and each failed expectation."""
    prepare = getattr(suite, "prepare_frame", None)
    if prepare is not None:
        frame = prepare(frame)
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = (
        context.data_sources.add_pandas("frames")
        .add_dataframe_asset(name)
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": frame})
    )
    suite_definition = gx.ExpectationSuite(name=name, expectations=suite(gx, params or {}))
    ids = [column for column in explain.ID_COLUMNS if column in frame.columns]
    result_format: dict = {"result_format": "SUMMARY"}
    if ids:  # the failing rows' ids come back with their values (partial_unexpected_index_list)
        result_format["unexpected_index_column_names"] = ids
    result = batch.validate(suite_definition, result_format=result_format)
    failed = [_failure(item) for item in result.results if not item.success][:FAILED_DETAIL_LIMIT]
    statistics = result.statistics
    metadata = {
        "suite": name,
        "evaluated": statistics["evaluated_expectations"],
        "successful": statistics["successful_expectations"],
        "failed": failed,
    }
    if failed:
        # one line per failed expectation, for the CLI, the pack and the Dagster UI alike
        metadata["explanation"] = "\n".join(explain.explanation(failed))
    return Outcome(passed=bool(result.success), metadata=metadata)


def _failure(item) -> dict:
    kind = item.expectation_config.type
    detail = {
        "expectation": kind,
        "kwargs": {k: _short(v) for k, v in item.expectation_config.kwargs.items() if k != "batch_id"},
        "unexpected_count": item.result.get("unexpected_count"),
        "element_count": item.result.get("element_count"),
        "observed_value": _plain(item.result.get("observed_value")),
    }
    message = _exception_message(item.exception_info)
    if message:
        detail["exception"] = message  # e.g. a column the table lacks
    unexpected = item.result.get("partial_unexpected_list")
    if unexpected:
        detail["unexpected_examples"] = [_plain(value) for value in unexpected[:UNEXPECTED_SHOWN]]
    rows = item.result.get("partial_unexpected_index_list") or []
    examples = [_plain(row) if isinstance(row, dict) else {"row": _plain(row)} for row in rows]
    if examples:
        detail["examples"] = explain.example_rows(examples)
    detail["what"] = explain.failure_words(detail)
    # an expectation may carry its own hint (`meta={"hint": ...}`) where the kind's would not fit the cause
    detail["hint"] = (item.expectation_config.meta or {}).get("hint") or explain.hint(kind)
    return detail


def _exception_message(info) -> str | None:
    """GE gives one exception record, or one per metric it could not compute."""
    if not isinstance(info, dict):
        return None
    records = [info] if "exception_message" in info else [v for v in info.values() if isinstance(v, dict)]
    messages = [str(r["exception_message"]) for r in records if r.get("exception_message")]
    return "; ".join(dict.fromkeys(messages)) or None


def _short(value):
    if isinstance(value, (list, tuple)) and len(value) > KWARG_ITEMS_SHOWN:
        return [*value[:KWARG_ITEMS_SHOWN], f"… {len(value) - KWARG_ITEMS_SHOWN} more"]
    return value


def _plain(value):
    """A JSON-safe form of one unexpected value (a scalar, or a row of a compound expectation)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (bool, int, float, str)):
        value = value.item()  # a numpy scalar
    if isinstance(value, float) and value != value:
        return None  # NaN: a missing value (and not valid JSON)
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)
