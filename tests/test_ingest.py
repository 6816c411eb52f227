"""OpenAI-style JSONL ingest: canonical rows, bad lines quarantined with line number and reason."""

import json
from pathlib import Path

import pytest

from pipeline.logs import ingest_log
from tests.conftest import DEMO_LOG

GOOD = {
    "id": "a",
    "timestamp": "2026-11-02T14:00:00.500Z",
    "tenant": "web",
    "request": {"messages": [{"role": "user", "content": "hi"}]},
    "response": {"usage": {"prompt_tokens": 3, "completion_tokens": 7}},
    "latency_ms": 120.5,
}


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_good_line_becomes_a_canonical_row(tmp_path: Path):
    result = ingest_log(_write(tmp_path, [json.dumps(GOOD)]), "openai_jsonl")
    rows, rejects = result.tables()
    row = rows.to_pylist()[0]
    assert rows.num_rows == 1 and rejects.num_rows == 0
    assert row["request_id"] == "a" and row["prompt_tokens"] == 3 and row["output_tokens"] == 7
    assert row["arrival_at"].isoformat() == "2026-11-02T14:00:00.500000+00:00"
    assert json.loads(row["messages_json"]) == GOOD["request"]["messages"]
    assert row["tenant"] == "web" and row["logged_latency_ms"] == 120.5 and row["source_line"] == 1


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"id": "x", "timest', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({**GOOD, "timestamp": "yesterday"}), "field timestamp: not ISO-8601"),
        (json.dumps({**GOOD, "response": {}}), "field response.usage: missing"),
        (json.dumps({**GOOD, "response": {"usage": {"prompt_tokens": 0, "completion_tokens": 2}}}), "field response.usage.prompt_tokens"),
        (json.dumps({**GOOD, "request": {"messages": "hi"}}), "field request.messages"),
    ],
)
def test_bad_line_is_quarantined_with_line_number_and_reason(tmp_path: Path, line: str, reason: str):
    result = ingest_log(_write(tmp_path, [json.dumps(GOOD), line]), "openai_jsonl")
    rows, rejects = result.tables()
    assert rows.num_rows == 1
    reject = rejects.to_pylist()[0]
    assert reject["source_line"] == 2 and reason in reject["reason"]
    assert reject["source_file"].endswith("log.jsonl")
    assert result.reject_rate == 0.5


def test_rows_are_sorted_by_arrival(tmp_path: Path):
    late = {**GOOD, "id": "late", "timestamp": "2026-11-02T14:00:09Z"}
    rows, _ = ingest_log(_write(tmp_path, [json.dumps(late), json.dumps(GOOD)]), "openai_jsonl").tables()
    assert rows.column("request_id").to_pylist() == ["a", "late"]


def test_missing_file_and_unknown_format_are_named(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="absent.jsonl"):
        ingest_log(tmp_path / "absent.jsonl", "openai_jsonl")
    with pytest.raises(ValueError, match="format"):
        ingest_log(DEMO_LOG, "tsv")


def test_bundled_demo_log_has_its_two_broken_lines_quarantined():
    result = ingest_log(DEMO_LOG, "openai_jsonl")
    assert len(result.rejects) == 2
    assert len(result.rows) > 1000
