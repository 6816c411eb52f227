"""Line numbers in a log read on every thread (a format's `read_in_parallel`: DuckDB stores the
lines in the files' order and the stored row numbers them, sql/raw_log_lines.sql) and in one
numbered as it is read. These logs are many reader buffers long (the buffer is shrunk to 2 MiB
here; 128 MiB in production), so bad lines sit past the points where the reader splits the file
between threads, and each good line's request id names its own file and line: a line numbered from
the wrong place fails on its own row."""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path

import pytest

from pipeline.workload.logs import ingest_log
from pipeline.workload.logs.formats import FORMATS

GOOD_LINES = 150_000  # two of DuckDB's 122,880-row groups: the table scan after the read is parallel too
READER_REJECT = 123_457  # invalid UTF-8: DuckDB's reader drops it (sql/line_rejects.sql)
BAD = {
    2: ('{"id": "broken', "not valid JSON"),
    61_003: ("[1, 2]", "not a JSON object"),
    100_000: (None, "field timestamp: not ISO-8601"),
    149_999: ('{"id": "x", "timest', "not valid JSON"),
}
BLANK = 77_777  # neither a row nor a reject, but still counts as a line


def _line(file: str, number: int, timestamp: str = "2026-11-02T14:00:00.500Z") -> str:
    return json.dumps(
        {
            "id": f"{file}:{number}",
            "timestamp": timestamp,
            "request": {"messages": [{"role": "user", "content": "x" * (number % 97)}]},
            "response": {"usage": {"prompt_tokens": 3, "completion_tokens": 7}},
            "latency_ms": 120.5,
        }
    )


def _write_log(path: Path, lines: int, reader_reject: bool) -> set[int]:
    """Write `lines` lines; return the numbers of the lines that must become rows."""
    good = set()
    with path.open("wb") as handle:
        for number in range(1, lines + 1):
            if number in BAD:
                text, _ = BAD[number]
                handle.write((text or _line(path.name, number, "yesterday")).encode() + b"\n")
            elif number == BLANK:
                handle.write(b"\n")
            elif number == READER_REJECT and reader_reject:
                handle.write(b'{"id": "\xff"}\n')
            else:
                handle.write(_line(path.name, number).encode() + b"\n")
                good.add(number)
    return good


@pytest.mark.parametrize(
    ("in_parallel", "reader_reject"),
    [(True, False), (True, True), (False, True)],
    ids=["parallel", "parallel-reader-reject", "streamed-reader-reject"],
)
def test_every_row_and_reject_keeps_its_own_line_deep_in_a_long_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_parallel: bool, reader_reject: bool
):
    monkeypatch.setitem(
        FORMATS, "openai_jsonl", dataclasses.replace(FORMATS["openai_jsonl"], read_in_parallel=in_parallel)
    )
    ingest_module = importlib.import_module("pipeline.workload.logs.ingest")  # the package exports its function
    monkeypatch.setattr(ingest_module, "MAX_LINE_BYTES", 1024 * 1024)  # 2 MiB reader buffers
    good_a = _write_log(tmp_path / "a.jsonl", GOOD_LINES, reader_reject)
    assert (tmp_path / "a.jsonl").stat().st_size > 12 * 2 * 1024 * 1024  # a dozen buffers and more
    good_b = _write_log(tmp_path / "b.jsonl", 3_000, reader_reject=False)  # its numbers restart at 1
    rows, rejects = ingest_log(tmp_path / "*.jsonl", "openai_jsonl").tables()

    numbered = [(Path(row["source_file"]).name, row["source_line"], row["request_id"]) for row in rows.to_pylist()]
    assert all(request_id == f"{file}:{line}" for file, line, request_id in numbered)
    assert sorted((file, line) for file, line, _ in numbered) == sorted(
        [("a.jsonl", line) for line in good_a] + [("b.jsonl", line) for line in good_b]
    )
    reasons = {(Path(row["source_file"]).name, row["source_line"]): row["reason"] for row in rejects.to_pylist()}
    expected = {("a.jsonl", line) for line in BAD} | {("b.jsonl", 2)}
    assert set(reasons) == expected | ({("a.jsonl", READER_REJECT)} if reader_reject else set())
    for line, (_, words) in BAD.items():
        assert words in reasons[("a.jsonl", line)]
    if reader_reject:
        assert "INVALID ENCODING" in reasons[("a.jsonl", READER_REJECT)]


def _span(number: int, operation: str = "chat", messages: str | None = None) -> dict:
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": operation}},
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(number + 1)}},
        {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "3"}},
    ]
    if messages is not None:
        attributes.append({"key": "gen_ai.input.messages", "value": {"stringValue": messages}})
    start = 1_762_092_000_000_000_000 + number * 1000
    return {
        "spanId": f"s{number}",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 10**9),
        "attributes": attributes,
    }


def _resource(service: str, scopes: list[list[dict] | None]) -> dict:
    return {
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"spans": spans} for spans in scopes],
    }


def test_otel_span_numbers_count_over_every_resource_and_scope_of_the_line(tmp_path: Path):
    """The OTLP query unnests a resource at a time: span k of a line still counts the spans of the
    resources and scopes before it, and a rejected line is one row beside the spans of good lines."""
    lines = [
        {
            "resourceSpans": [
                _resource("a", [[_span(1), _span(2, "http")], [_span(3)]]),
                _resource("b", [[_span(4, messages="not json")], [], [_span(5)]]),
            ]
        },
        {"resourceSpans": []},
        {"resourceSpans": [_resource("c", []), {"resource": {}}, _resource("d", [[_span(6)]])]},
        {"resourceSpans": "x"},
        {"resourceSpans": [None, _resource("f", [None, [_span(7)]])]},
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n{broken\n")
    rows, rejects = ingest_log(path, "otel_genai").tables()
    assert sorted((row["source_line"], row["request_id"], row["tenant"]) for row in rows.to_pylist()) == [
        (1, "s1", "a"),
        (1, "s3", "a"),
        (1, "s5", "b"),
        (3, "s6", "d"),
        (5, "s7", "f"),
    ]
    assert {row["source_line"]: row["reason"] for row in rejects.to_pylist()} == {
        1: "span 4 (spanId s4): field gen_ai.input.messages: not valid JSON",
        4: "field resourceSpans: missing or not a list",
        6: "not valid JSON",
    }
