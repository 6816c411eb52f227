"""A failed expectation in words a user can act on: what was expected, how many rows fail, a few
example rows (ids and the checked values) and what to do about it.

Built from the plain dicts `runner._failure` makes of great-expectations' results, so this module
never imports great_expectations (the CLI and the pack read the words from a check's metadata).
Example rows carry ids and the expectation's own columns only; a column that holds prompt or
reply text (or a secret) is withheld, whatever the expectation checked.
"""

from __future__ import annotations

EXAMPLE_ROWS = 5
# the columns that identify a row, in the order they are shown
ID_COLUMNS = ("candidate", "request_id", "item_id")
# values never shown in an example: prompt and reply text, keys
WITHHELD_COLUMNS = frozenset(
    {"text", "reply", "reply_text", "raw", "messages_json", "messages", "prompt", "api_key", "authorization"}
)
WITHHELD = "(withheld)"
STRING_SHOWN = 60

# what a user can do, per expectation kind (great-expectations' snake_case type)
HINTS = {
    "expect_column_pair_values_a_to_be_greater_than_b": (
        "the rows are out of order: for a replay's timestamps, check that every shard used one clock "
        "(monotonic on one host, `clock: wall` across hosts) and re-run the replay; for a log, fix the "
        "exporter's columns or the spec's column mapping"
    ),
    "expect_column_pair_values_to_be_equal": "two columns that must agree do not: re-run the step that wrote them",
    "expect_column_values_to_not_be_null": (
        "values are missing: check the spec's column mapping (`workload.source.columns`) or the writer of the table"
    ),
    "expect_column_values_to_be_unique": "ids repeat: de-duplicate the source or check the sampling step",
    "expect_compound_columns_to_be_unique": "rows repeat: de-duplicate the source or re-run the step that wrote them",
    "expect_column_values_to_be_in_set": (
        "unknown values: check the spec's names (candidates, labels, statuses) against the data"
    ),
    "expect_column_distinct_values_to_equal_set": "the set of values differs from the expected one: check the spec",
    "expect_column_values_to_be_between": (
        "values out of range: check units and the spec's bounds (e.g. `max_tokens`, the model's context)"
    ),
    "expect_column_value_lengths_to_be_between": "values too short or too long: check the source's format",
    "expect_column_values_to_be_increasing": "values go backwards: sort the source or check its clock",
    "expect_table_row_count_to_equal": (
        "rows are missing or extra: re-run the step (a replay that was interrupted leaves requests unrecorded)"
    ),
    "expect_table_row_count_to_be_between": "too few or too many rows: check the source and the spec's sampling",
    "expect_column_quantile_values_to_be_between": (
        "the distribution is off: read the quantiles observed beside the bounds, and the endpoint's health"
    ),
    "expect_column_to_exist": "a column is missing: check the spec's column mapping and the file's schema",
}
DEFAULT_HINT = "re-run the step that wrote the table; if it fails again, the source data need a look"


def expectation_words(kind: str, kwargs: dict) -> str:
    """What the expectation asks, in a line: `t_first_token_ns ≥ t_sent_ns`."""
    column = kwargs.get("column")
    where = f" where {kwargs['row_condition']}" if kwargs.get("row_condition") else ""
    if kind == "expect_column_pair_values_a_to_be_greater_than_b":
        relation = "≥" if kwargs.get("or_equal") else ">"
        return f"{kwargs.get('column_A')} {relation} {kwargs.get('column_B')}{where}"
    if kind == "expect_column_pair_values_to_be_equal":
        return f"{kwargs.get('column_A')} = {kwargs.get('column_B')}{where}"
    if kind == "expect_column_values_to_not_be_null":
        return f"{column} is set{where}"
    if kind == "expect_column_values_to_be_unique":
        return f"{column} is unique{where}"
    if kind == "expect_compound_columns_to_be_unique":
        return f"({', '.join(kwargs.get('column_list') or [])}) is unique{where}"
    if kind in ("expect_column_values_to_be_in_set", "expect_column_distinct_values_to_equal_set"):
        verb = "is one of" if kind == "expect_column_values_to_be_in_set" else "takes exactly the values"
        return f"{column} {verb} {kwargs.get('value_set')}{where}"
    if kind in ("expect_column_values_to_be_between", "expect_column_value_lengths_to_be_between"):
        subject = str(column) if kind == "expect_column_values_to_be_between" else f"len({column})"
        return _bounded(subject, kwargs.get("min_value"), kwargs.get("max_value")) + where
    if kind == "expect_column_values_to_be_increasing":
        return f"{column} {'strictly increases' if kwargs.get('strictly') else 'never decreases'} row by row"
    if kind == "expect_table_row_count_to_equal":
        return f"the table has {kwargs.get('value')} rows"
    if kind == "expect_table_row_count_to_be_between":
        return _bounded("the row count", kwargs.get("min_value"), kwargs.get("max_value"))
    if kind == "expect_column_quantile_values_to_be_between":
        ranges = kwargs.get("quantile_ranges") or {}
        bounds = [
            _bounded(f"{_quantile_name(q)} of {column}", low, high)
            for q, (low, high) in zip(ranges.get("quantiles") or [], ranges.get("value_ranges") or [])
        ]
        return ", ".join(bounds) or f"the quantiles of {column} lie within their bounds"
    if kind == "expect_column_to_exist":
        return f"the column {column} exists"
    shown = ", ".join(f"{key}={value}" for key, value in kwargs.items())
    return f"{kind}({shown})"


def _quantile_name(q: float) -> str:
    """0.99 → p99, 0.5 → p50 (the figures' own names)."""
    return "p" + f"{q * 100:g}".replace(".", "")


def _observed(value) -> str:
    """An observed value in words: quantiles as `p99 = 12.6`, anything else as it is."""
    if isinstance(value, dict) and "quantiles" in value and "values" in value:
        return ", ".join(f"{_quantile_name(q)} = {v:.4g}" for q, v in zip(value["quantiles"], value["values"]))
    return str(value)


def _bounded(subject: str, low, high) -> str:
    if low is not None and high is not None:
        return f"{low} ≤ {subject} ≤ {high}"
    if low is not None:
        return f"{subject} ≥ {low}"
    return f"{subject} ≤ {high}"


def failure_words(failure: dict) -> str:
    """`t_first_token_ns ≥ t_sent_ns: 3 of 238 rows fail`, or what was observed instead."""
    kwargs = failure.get("kwargs") or {}
    words = expectation_words(failure["expectation"], kwargs)
    if kwargs.get("mostly") is not None:
        words += f" (on at least {kwargs['mostly']:.0%} of rows)"
    if failure.get("exception"):
        return f"{words}: could not be checked ({failure['exception']})"
    count = failure.get("unexpected_count")
    if count is not None:
        total = failure.get("element_count")
        return f"{words}: {count} of {total} rows fail" if total is not None else f"{words}: {count} rows fail"
    return f"{words}: observed {_observed(failure.get('observed_value'))}"


def example_rows(rows: list[dict]) -> list[dict]:
    """Up to EXAMPLE_ROWS failing rows: ids first, then the checked values, text withheld."""
    examples = []
    for row in rows[:EXAMPLE_ROWS]:
        ordered = {key: row[key] for key in ID_COLUMNS if key in row}
        ordered.update({key: value for key, value in row.items() if key not in ordered})
        examples.append({key: _shown(key, value) for key, value in ordered.items()})
    return examples


def _shown(column: str, value):
    if column in WITHHELD_COLUMNS:
        return WITHHELD
    if isinstance(value, str) and len(value) > STRING_SHOWN:
        return value[:STRING_SHOWN] + "…"
    if isinstance(value, float):
        return float(f"{value:.6g}")  # 0.8888888888888888 → 0.888889: a reader's digits, not a repr's
    return value


def hint(kind: str) -> str:
    return HINTS.get(kind, DEFAULT_HINT)


def explanation(failures: list[dict]) -> list[str]:
    """One line per failed expectation (`runner._failure`'s dicts: `what`, `examples`, `hint`): the
    words, up to five example rows, what to do."""
    lines = []
    for failure in failures:
        line = failure["what"]
        examples = failure.get("examples") or []
        if examples:
            shown = "; ".join(", ".join(f"{key}={value}" for key, value in row.items()) for row in examples)
            line += f" (e.g. {shown})"
        lines.append(f"{line}. What to do: {failure['hint']}")
    return lines
