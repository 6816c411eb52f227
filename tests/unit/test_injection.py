"""Injection: log text and spec strings are data, never SQL; names never leave the pack folder.

Every query is a file in sql/ with `$name` parameters, so a request id or tenant written as SQL
flows through ingest → sample → profile as the same string. Spec strings that could reach SQL
or a path are validated up front (an error naming file, line and field).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.files.layout import PackLayout
from pipeline.spec import SpecError, load_spec
from pipeline.spec.workload import ColumnMapping, LogSource, Sample
from pipeline.workload.logs import ingest_log
from pipeline.workload.logs.ingest import ingest
from pipeline.workload.profile import profile_requests
from pipeline.workload.sampling import draw_sample
from tests.support.specs import demo_spec_dict

PAYLOADS = [
    "x'); DROP TABLE production_logs; --",
    '"; DROP TABLE requests; --',
    "' OR '1'='1",
    "$first_us",
    "r1' UNION SELECT * FROM log_lines --",
    "../../etc/passwd",
    "<script>alert(1)</script>",
]


def _openai_line(index: int, text: str) -> str:
    return json.dumps(
        {
            "id": text,
            "timestamp": f"2026-11-02T14:00:{index:02d}Z",
            "tenant": text,
            "route": text,
            "request": {"messages": [{"role": "user", "content": text}]},
            "response": {"usage": {"prompt_tokens": 10 + index, "completion_tokens": 5 + index}},
        }
    )


@pytest.mark.parametrize("mode", ["busiest_window", "stratified"])
def test_sql_in_log_text_flows_through_ingest_sample_and_profile_as_data(tmp_path: Path, mode: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(_openai_line(i, text) for i, text in enumerate(PAYLOADS)) + "\n")
    rows_path, quarantine = tmp_path / "rows.parquet", tmp_path / "quarantine.parquet"
    stats = ingest(LogSource(path=str(log)), tmp_path, rows_path, quarantine, run_id="x'); DROP TABLE t; --")
    assert (stats.accepted, stats.rejected) == (len(PAYLOADS), 0)
    rows = pq.read_table(rows_path).to_pylist()
    assert sorted(r["request_id"] for r in rows) == sorted(PAYLOADS) == sorted(r["tenant"] for r in rows)
    assert {r["run_id"] for r in rows} == {"x'); DROP TABLE t; --"}
    assert all(json.loads(r["messages_json"])[0]["content"] == r["request_id"] for r in rows)

    sample, _ = draw_sample(rows_path, Sample(mode=mode, window_s=3600, strata=["tenant", "route"]))
    assert sorted(sample.column("request_id").to_pylist()) == sorted(PAYLOADS)
    assert sorted(sample.column("tenant").to_pylist()) == sorted(PAYLOADS)
    profile = profile_requests(rows_path)
    assert profile["requests"] == len(PAYLOADS)


def test_sql_in_csv_and_parquet_column_names_is_a_name_not_sql(tmp_path: Path) -> None:
    name = "ts'); DROP TABLE log_lines; --"
    (tmp_path / "log.csv").write_text(f'"{name}",ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,3,4\n')
    mapping = ColumnMapping(
        arrival=name, arrival_unit="timestamp", prompt_tokens="ContextTokens", output_tokens="GeneratedTokens"
    )
    rows, rejects = ingest_log(tmp_path / "log.csv", "csv", columns=mapping).tables()
    assert (rows.num_rows, rejects.num_rows) == (1, 0) and rows.column("prompt_tokens").to_pylist() == [3]

    quoted = 'arrival" FROM x; DROP TABLE parquet_rows; --'
    pq.write_table(pa.table({quoted: ["2023-11-16 18:00:00"], "p": [3], "o": [4]}), tmp_path / "log.parquet")
    mapping = ColumnMapping(arrival=quoted, arrival_unit="timestamp", prompt_tokens="p", output_tokens="o")
    rows, rejects = ingest_log(tmp_path / "log.parquet", "parquet", columns=mapping).tables()
    assert (rows.num_rows, rejects.num_rows) == (1, 0) and rows.column("output_tokens").to_pylist() == [4]


def _spec_error(tmp_path: Path, edit) -> str:
    data = demo_spec_dict()
    edit(data)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    return str(caught.value)


def test_spec_time_zone_written_as_sql_is_refused_at_load_naming_the_field(tmp_path: Path) -> None:
    """Found here: an unknown time zone passed the spec and failed inside DuckDB at ingest, as a
    NotImplementedException naming no file or field; now the spec loader refuses it."""
    message = _spec_error(tmp_path, lambda d: d["workload"]["log"].update(timezone="UTC'; DROP TABLE log_lines; --"))
    assert "spec.yaml:" in message and "workload.log.timezone" in message and "unknown time zone" in message


@pytest.mark.parametrize("name", ["../escape", "a/b", "/etc", "..\\x", "name with space"])
def test_candidate_names_that_could_leave_the_pack_folder_are_refused(tmp_path: Path, name: str) -> None:
    message = _spec_error(tmp_path, lambda d: d["candidates"][0].update(name=name))
    assert "candidates.0.name" in message and "spec.yaml:" in message


@pytest.mark.parametrize("name", [".", "..", "...", "-", "a..b"])
def test_dotted_names_the_pattern_allows_still_stay_inside_the_journal_folder(tmp_path: Path, name: str) -> None:
    layout = PackLayout(tmp_path / "pack")
    path = layout.journal("3f2a-run", name)
    assert path.resolve().parent == (tmp_path / "pack" / "journal").resolve()
