"""OpenAI-style JSONL ingest: canonical rows, bad lines quarantined with line number and reason."""

import json
from pathlib import Path

import pytest

from pipeline.workload.logs import ingest_log
from tests.support.specs import DEMO_LOG

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
        (
            json.dumps({**GOOD, "response": {"usage": {"prompt_tokens": 0, "completion_tokens": 2}}}),
            "field response.usage.prompt_tokens",
        ),
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


def test_every_row_keeps_its_own_line_whatever_the_arrival_order(tmp_path: Path):
    late = {**GOOD, "id": "late", "timestamp": "2026-11-02T14:00:09Z"}
    rows, _ = ingest_log(_write(tmp_path, [json.dumps(late), json.dumps(GOOD)]), "openai_jsonl").tables()
    by_line = {row["source_line"]: row["request_id"] for row in rows.to_pylist()}
    assert by_line == {1: "late", 2: "a"}


def test_missing_file_and_unknown_format_are_named(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="absent.jsonl"):
        ingest_log(tmp_path / "absent.jsonl", "openai_jsonl")
    with pytest.raises(ValueError, match="format"):
        ingest_log(DEMO_LOG, "tsv")


def test_bundled_demo_log_has_its_two_broken_lines_quarantined():
    result = ingest_log(DEMO_LOG, "openai_jsonl")
    assert len(result.rejects) == 2
    assert len(result.rows) > 1000


# --- more formats, globs, gzip, line numbers -------------------------------------------------

import gzip  # noqa: E402

from pipeline.workload.logs import IngestError  # noqa: E402
from tests.support.shared_data import shared_data  # noqa: E402

AZURE_DIR = shared_data("azure_llm_2023_conv")


def test_azure_csv_glob_with_gzip_keeps_physical_line_numbers_around_bad_lines(tmp_path: Path):
    (tmp_path / "a1.csv").write_bytes(
        b"TIMESTAMP,ContextTokens,GeneratedTokens\n"
        b"2023-11-16 18:15:46.6805900,374,44\n"
        b"\n"  # blank: skipped, but still line 3
        b"2023-11-16 18:15:50.9951690,x,109\n"
        b"2023-11-16 18:15:51.2224670,879\n"
        b"2023-11-16 18:15:51 \xff,1,2\n"  # invalid UTF-8: the reader itself rejects it
        b'2023-11-16 18:15:52.1,"5",3\n'
        b"2023-11-16 18:15:53.1,5,0"  # no trailing newline, as in the real trace
    )
    with gzip.open(tmp_path / "a2.csv.gz", "wt") as handle:  # other column order
        handle.write("GeneratedTokens,TIMESTAMP,ContextTokens\n7,2023-11-16 18:16:00,100\n")
    result = ingest_log(tmp_path / "a*.csv*", "azure_csv")
    rows, rejects = result.tables()
    accepted = sorted(
        (Path(r["source_file"]).name, r["source_line"], r["prompt_tokens"], r["output_tokens"])
        for r in rows.to_pylist()
    )
    assert accepted == [("a1.csv", 2, 374, 44), ("a1.csv", 7, 5, 3), ("a2.csv.gz", 2, 100, 7)]
    assert min(rows.column("arrival_at").to_pylist()).isoformat() == "2023-11-16T18:15:46.680590+00:00"
    reasons = {r["source_line"]: r["reason"] for r in rejects.to_pylist()}
    assert set(reasons) == {4, 5, 6, 8}
    assert "field ContextTokens" in reasons[4] and "found 2" in reasons[5]
    assert "INVALID ENCODING" in reasons[6] and "field GeneratedTokens" in reasons[8]


def test_time_zone_of_naive_timestamps_comes_from_the_spec(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,1,1\n")
    rows, _ = ingest_log(path, "azure_csv", timezone="Europe/Berlin").tables()
    assert rows.column("arrival_at").to_pylist()[0].isoformat() == "2023-11-16T17:00:00+00:00"


def test_mooncake_jsonl_offsets_from_origin_and_hash_ids(tmp_path: Path):
    lines = [
        '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}',
        '{"timestamp": 1500, "input_length": 700, "output_length": 6, "hash_ids": [1, 3]}',
        '{"timestamp": 20, "input_length": 7, "output_length": 1, "hash_ids": [1, "x"]}',
    ]
    rows, rejects = ingest_log(_write(tmp_path, lines), "mooncake_jsonl", origin="2026-01-01T00:00:00Z").tables()
    rows = rows.sort_by("source_line")
    assert [r.isoformat() for r in rows.column("arrival_at").to_pylist()] == [
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:01.500000+00:00",
    ]
    assert rows.column("prefix_hashes").to_pylist() == [[1, 2], [1, 3]]
    assert rejects.to_pylist()[0]["source_line"] == 3 and "hash_ids" in rejects.to_pylist()[0]["reason"]


def test_burstgpt_csv_failed_requests_are_quarantined(tmp_path: Path):
    path = tmp_path / "burst.csv"
    path.write_text(
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        "5,ChatGPT,472,18,490,Conversation log\n"
        "45,GPT-4,1087,0,1087,API log\n"
    )
    rows, rejects = ingest_log(path, "burstgpt_csv").tables()
    row = rows.to_pylist()[0]
    assert (row["route"], row["tenant"], row["prompt_tokens"]) == ("ChatGPT", "Conversation log", 472)
    assert row["arrival_at"].isoformat() == "1970-01-01T00:00:05+00:00"
    assert rejects.to_pylist()[0]["source_line"] == 3 and "Response tokens" in rejects.to_pylist()[0]["reason"]


def test_generic_csv_and_parquet_with_a_column_mapping(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    mapping = {
        "arrival": "ts",
        "arrival_unit": "ms",
        "prompt_tokens": "inp",
        "output_tokens": "out",
        "tenant": "team",
        "messages_json": "msgs",
    }
    (tmp_path / "log.csv").write_text(
        'ts,inp,out,team,msgs\n1000,3,4,a,"[{""role"": ""user"", ""content"": ""hi, there""}]"\n'
    )
    rows, _ = ingest_log(tmp_path / "log.csv", "csv", columns=mapping).tables()
    assert json.loads(rows.to_pylist()[0]["messages_json"]) == [{"role": "user", "content": "hi, there"}]
    assert rows.to_pylist()[0]["arrival_at"].isoformat() == "1970-01-01T00:00:01+00:00"
    pq.write_table(
        pa.table({"ts": [2000, 1000], "inp": [5, 0], "out": [6, 1], "team": ["b", "c"], "msgs": [None, None]}),
        tmp_path / "log.parquet",
    )
    rows, rejects = ingest_log(tmp_path / "log.parquet", "parquet", columns=mapping).tables()
    rows = rows.sort_by("source_line")
    assert rows.to_pylist()[0]["source_line"] == 1 and rows.to_pylist()[0]["tenant"] == "b"
    assert rejects.to_pylist()[0]["source_line"] == 2 and "field inp" in rejects.to_pylist()[0]["reason"]


def test_csv_header_without_a_mapped_column_names_file_line_and_column(tmp_path: Path):
    path = tmp_path / "bad.csv"
    path.write_text("time,ContextTokens,GeneratedTokens\n")
    with pytest.raises(IngestError, match=r"bad.csv:1: header has no column 'TIMESTAMP'"):
        ingest_log(path, "azure_csv")


def test_openai_structure_flags_and_message_prefix_hashes(tmp_path: Path):
    system = {"role": "system", "content": "be brief"}
    tools = {
        **GOOD,
        "request": {"messages": [system, {"role": "user", "content": "a"}], "tools": [{"type": "function"}]},
    }
    plain = {**GOOD, "request": {"messages": [system, {"role": "user", "content": "b"}]}}
    rows, _ = ingest_log(_write(tmp_path, [json.dumps(tools), json.dumps(plain)]), "openai_jsonl").tables()
    first, second = rows.sort_by("source_line").to_pylist()
    assert first["structured_output"] is True and second["structured_output"] is False
    assert first["prefix_hashes"][0] == second["prefix_hashes"][0]  # same system prompt
    assert first["prefix_hashes"][1] != second["prefix_hashes"][1]


@pytest.mark.skipif(not AZURE_DIR.is_dir(), reason="../shared/data/azure_llm_2023_conv is absent")
def test_real_azure_trace_ingests_every_row():
    rows, rejects = ingest_log(AZURE_DIR / "*.csv", "azure_csv").tables()
    assert rows.num_rows == 19_366 and rejects.num_rows == 0
    assert max(rows.column("source_line").to_pylist()) == 19_367  # header + 19,366 lines, no trailing newline
    first = rows.sort_by("source_line").to_pylist()[0]
    assert (first["prompt_tokens"], first["output_tokens"]) == (374, 44)
    assert first["arrival_at"].isoformat() == "2023-11-16T18:15:46.680590+00:00"
