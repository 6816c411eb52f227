"""The buyer's labelled slice: load it (CSV or JSONL), render each item's prompt, score replies.

Bad input is refused with the file, the line and the field named. Summaries are computed in
SQL (sql/accuracy_summary.sql, sql/accuracy_by_label.sql); this module only prepares rows.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa

from pipeline.accuracy.calls import CALL_MARKERS, ItemError, schema_item, score_json_schema, score_tool_call, tool_item
from pipeline.accuracy.scorers import AMBIGUOUS, ERROR, NO_ANSWER, make_scorer
from pipeline.contracts import ACCURACY_RESULTS_SCHEMA, LABELLED_SLICE_SCHEMA
from pipeline.spec.accuracy import AccuracySlice


class SliceError(ValueError):
    """A labelled slice that cannot be used; the message names the file, the line and the field."""


def slice_format(config: AccuracySlice, path: Path) -> str:
    if config.format:
        return config.format
    if path.suffix.lower() == ".csv":
        return "csv"
    if path.suffix.lower() in {".jsonl", ".ndjson"}:
        return "jsonl"
    raise SliceError(f"{path}: cannot tell CSV from JSONL by the suffix; set accuracy.format")


def _records(path: Path, kind: str):
    """(line number, record) pairs; the line is the file's own 1-based line."""
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise SliceError(f"{path}: cannot read labelled slice: {exc.strerror}") from exc
    with handle:
        if kind == "csv":
            for record in (reader := csv.DictReader(handle)):
                yield reader.line_num, record  # the record's last line (its only one, unless quoted newlines)
        else:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise SliceError(f"{path}:{number}: not valid JSON: {exc.msg}") from None
                if not isinstance(record, dict):
                    raise SliceError(f"{path}:{number}: each line must be a JSON object")
                yield number, record


def render_messages(config: AccuracySlice, text: str, labels: list[str]) -> list[dict]:
    prompt = config.prompt_template.format(text=text, labels=", ".join(labels))
    messages = [{"role": "system", "content": config.system_prompt}] if config.system_prompt else []
    return messages + [{"role": "user", "content": prompt}]


def _required(record: dict, field: str, path: Path, line: int) -> None:
    value = record.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise SliceError(f"{path}:{line}: {field}: missing or empty")


def _call_fields(config: AccuracySlice, record: dict) -> tuple[str, str, str | None]:
    """A tool_call or json_schema item's label, request fields and expected arguments (JSON text)."""
    label = record.get(config.label_field)
    if config.scorer == "tool_call":
        fields = (config.tools_field, config.tool_choice_field, str(config.arguments_field))
        expected = record.get(config.arguments_field) if config.arguments_field else None
        request = tool_item(
            record.get(config.tools_field), record.get(config.tool_choice_field), str(label), expected, fields
        )
        return str(label), json.dumps(request, ensure_ascii=False), None if expected is None else json.dumps(expected)
    request, name = schema_item(record.get(config.response_format_field), config.response_format_field)
    label = name if label is None or not str(label).strip() else label  # the schema names the item
    return str(label), json.dumps(request, ensure_ascii=False), None


def load_slice(config: AccuracySlice, path: Path) -> pa.Table:
    """Every item of the slice (up to max_items) with its rendered chat messages (and, for the
    tool_call and json_schema scorers, its request fields)."""
    kind = slice_format(config, path)
    items: list[dict] = []
    seen: dict[str, int] = {}  # item id -> line it was first on
    required = (config.text_field,) + ((config.label_field,) if config.scorer != "json_schema" else ())
    for line, record in _records(path, kind):
        for field in required + ((config.id_field,) if config.id_field else ()):
            _required(record, field, path, line)
        item_id = str(record[config.id_field]) if config.id_field else str(line)
        if item_id in seen:
            raise SliceError(
                f"{path}:{line}: {config.id_field}: duplicate id {item_id!r} (first on line {seen[item_id]})"
            )
        seen[item_id] = line
        label, request, expected = str(record.get(config.label_field)), None, None
        if config.scores_calls:
            if kind == "csv":
                raise SliceError(f"{path}: scorer {config.scorer} needs a JSONL slice (each item's request fields)")
            try:
                label, request, expected = _call_fields(config, record)
            except ItemError as exc:
                raise SliceError(f"{path}:{line}: {exc}") from None
        items.append(
            {"item_id": item_id, "text": str(record[config.text_field]), "label": label, "source_line": line}
            | {"request_json": request, "expected_json": expected}
        )
        if config.max_items and len(items) >= config.max_items:
            break
    if not items:
        raise SliceError(f"{path}: the labelled slice has no items")
    labels = label_set(config, [item["label"] for item in items])
    for item in items:
        item["messages_json"] = json.dumps(render_messages(config, item["text"], labels), ensure_ascii=False)
    return pa.Table.from_pylist(items, schema=LABELLED_SLICE_SCHEMA)


def label_set(config: AccuracySlice, labels: list[str]) -> list[str]:
    """The labels a reply may choose from: the spec's list, or the slice's, sorted."""
    return list(config.labels) if config.labels else sorted(set(labels))


def score_replies(config: AccuracySlice, slice_table: pa.Table, replies: list[dict]) -> pa.Table:
    """Score each reply (one per item and candidate) against its label; an error is wrong. The
    tool_call and json_schema scorers judge the reply's calls or answer and keep neither."""
    if config.scores_calls:
        return _score_calls(config, slice_table, replies)
    scorer = make_scorer(config.scorer, label_set(config, slice_table.column("label").to_pylist()), config.pattern)
    rows = []
    for reply in replies:
        if reply["status"] == "ok":
            predicted, correct = scorer(reply["reply"] or "", reply["label"])
        else:
            predicted, correct = ERROR, False
        rows.append({**reply, "predicted": predicted, "correct": correct})
    return pa.Table.from_pylist(rows, schema=ACCURACY_RESULTS_SCHEMA)


def _score_calls(config: AccuracySlice, slice_table: pa.Table, replies: list[dict]) -> pa.Table:
    items = {
        item["item_id"]: item for item in slice_table.select(["item_id", "request_json", "expected_json"]).to_pylist()
    }
    rows = []
    for reply in replies:
        calls, finish = reply.pop("tool_calls", None) or [], reply.pop("finish_reason", None)
        text, reply["reply"] = reply["reply"], None  # the text and the arguments are judged, never kept
        item = items[reply["item_id"]]
        request = json.loads(item["request_json"])
        if reply["status"] != "ok":
            predicted, correct = ERROR, False
        elif config.scorer == "tool_call":
            expected = json.loads(item["expected_json"]) if item["expected_json"] else None
            predicted, correct = score_tool_call(request, calls, finish, reply["label"], expected)
        else:
            predicted, correct = score_json_schema(request, text, reply["label"])
        rows.append({**reply, "predicted": predicted, "correct": correct})
    return pa.Table.from_pylist(rows, schema=ACCURACY_RESULTS_SCHEMA)


def empty_slice() -> pa.Table:
    return LABELLED_SLICE_SCHEMA.empty_table()


def empty_results() -> pa.Table:
    return ACCURACY_RESULTS_SCHEMA.empty_table()


OTHER_ANSWER = "(other answer)"


def predictions_within_labels(config: AccuracySlice, slice_table: pa.Table, results: pa.Table) -> pa.Table:
    """`results` with every prediction that is not a label (nor a marker: no answer, ambiguous,
    error) as OTHER_ANSWER: an exact, normalised or regex scorer predicts the reply itself, which
    privacy.text hash and drop keep out of the pack; the confusion table then counts it once."""
    known = {*label_set(config, slice_table.column("label").to_pylist()), NO_ANSWER, AMBIGUOUS, ERROR, OTHER_ANSWER}
    known |= set(CALL_MARKERS)
    tools = _offered_names(slice_table)  # a tool_call prediction: tool names, the buyer's API, not text
    index = results.schema.get_field_index("predicted")
    predicted = [
        p if p is None or p in known or set(p.split(" + ")) <= tools else OTHER_ANSWER
        for p in results.column(index).to_pylist()
    ]
    return results.set_column(index, results.schema.field(index), pa.array(predicted, pa.string()))


def _offered_names(slice_table: pa.Table) -> set[str]:
    """The tools the items offered (a tool_call prediction names one of them, or several)."""
    names: set[str] = set()
    if "request_json" not in slice_table.schema.names:  # a slice written before the tool_call scorer
        return names
    for request in slice_table.column("request_json").to_pylist():
        tools = json.loads(request).get("tools") if request else None
        names |= {tool["function"]["name"] for tool in tools or []}
    return names
