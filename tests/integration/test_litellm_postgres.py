"""litellm_spend_logs straight from the proxy's PostgreSQL table: a real server (tests/support/postgres.py),
the table as LiteLLM's Prisma schema defines it, rows inserted, then ingested in batches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.postgres import PASSWORD, SKIP_REASON, postgres_server

pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
JSON_COLUMNS = ("metadata", "request_tags", "messages", "response", "proxy_server_request")


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    """A server whose LiteLLM_SpendLogs holds the JSON-lines fixture's rows that a table can hold."""
    import psycopg
    from psycopg.types.json import Jsonb

    with postgres_server() as url, psycopg.connect(url, autocommit=True) as connection:
        connection.execute((FIXTURES / "litellm_spend_logs_table.sql").read_text())
        for line in (FIXTURES / "litellm_spend_logs.jsonl").read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a cut line cannot be a table row
            values = {key: Jsonb(value) if key in JSON_COLUMNS else value for key, value in row.items()}
            columns = ", ".join(f'"{key}"' for key in values)
            placeholders = ", ".join(["%s"] * len(values))
            # test data going in, not a query of the tool: the values are bound, the names are the fixture's
            connection.execute(
                f'INSERT INTO "LiteLLM_SpendLogs" ({columns}) VALUES ({placeholders})', list(values.values())
            )
        yield url


def _ingest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str):
    from pipeline.spec.workload import LogSource
    from pipeline.workload.logs.ingest import ingest

    monkeypatch.setenv("LITELLM_DATABASE_URL", dsn)
    rows, quarantine = tmp_path / "rows.parquet", tmp_path / "quarantine.parquet"
    source = LogSource(format="litellm_spend_logs", dsn_env="LITELLM_DATABASE_URL")
    stats = ingest(source, tmp_path, rows, quarantine, "r1")
    return stats, pq.read_table(rows).to_pylist(), pq.read_table(quarantine).to_pylist()


def test_rows_from_the_table_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str):
    from pipeline.workload.logs import database

    monkeypatch.setattr(database, "BATCH_ROWS", 2)  # six rows: three batches
    stats, rows, rejects = _ingest(tmp_path, monkeypatch, dsn)
    # request_id order: chatcmpl-01, -02, -04, -06, -07, embd-03 (an embedding: no request)
    assert (stats.accepted, stats.rejected) == (3, 2)
    assert {row["request_id"]: row["source_line"] for row in rows} == {
        "chatcmpl-01": 1,
        "chatcmpl-02": 2,
        "chatcmpl-07": 5,
    }
    assert {row["source_line"]: row["reason"] for row in rejects} == {
        3: "request_id chatcmpl-04: field completion_tokens: must be an integer ≥ 1, got 0",
        4: "request_id chatcmpl-06: field endTime: before startTime",
    }
    first = next(row for row in rows if row["request_id"] == "chatcmpl-01")
    assert first["arrival_at"].isoformat() == "2026-11-02T14:00:00.500000+00:00"
    assert (first["logged_latency_ms"], first["logged_ttft_ms"]) == (1500.0, 250.0)
    assert (first["tenant"], first["route"], first["session_id"]) == ("team-search", "chat-small", "sess-1")
    assert json.loads(first["messages_json"])[1] == {"role": "user", "content": "hi"}
    port = dsn.rsplit(":", 1)[1].split("/")[0]
    assert {row["source_file"] for row in rows + rejects} == {
        f"postgresql://127.0.0.1:{port}/postgres#LiteLLM_SpendLogs"
    }


def test_the_dsn_is_written_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str):
    stats, _, _ = _ingest(tmp_path, monkeypatch, dsn)
    assert PASSWORD not in " ".join(stats.files)
    for path in tmp_path.iterdir():
        assert PASSWORD.encode() not in path.read_bytes(), path.name


def test_missing_variable_or_server_is_named_without_the_dsn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from pipeline.spec.workload import LogSource
    from pipeline.workload.logs.database import DatabaseError
    from pipeline.workload.logs.ingest import ingest

    source = LogSource(format="litellm_spend_logs", dsn_env="LOADPROOF_TEST_NO_SUCH_DSN")
    monkeypatch.delenv("LOADPROOF_TEST_NO_SUCH_DSN", raising=False)
    with pytest.raises(DatabaseError, match="LOADPROOF_TEST_NO_SUCH_DSN .* is not set"):
        ingest(source, tmp_path, tmp_path / "r.parquet", tmp_path / "q.parquet")
    monkeypatch.setenv("LOADPROOF_TEST_NO_SUCH_DSN", f"postgresql://postgres:{PASSWORD}@127.0.0.1:1/postgres")
    with pytest.raises(DatabaseError) as caught:
        ingest(source, tmp_path, tmp_path / "r.parquet", tmp_path / "q.parquet")
    assert "LOADPROOF_TEST_NO_SUCH_DSN" in str(caught.value) and PASSWORD not in str(caught.value)


def test_the_table_ingests_without_its_text_under_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str):
    from pipeline.spec.workload import LogSource
    from pipeline.workload.logs.ingest import TextPrivacy, ingest

    monkeypatch.setenv("LITELLM_DATABASE_URL", dsn)
    rows, quarantine, text = tmp_path / "rows.parquet", tmp_path / "quarantine.parquet", tmp_path / "text.parquet"
    source = LogSource(format="litellm_spend_logs", dsn_env="LITELLM_DATABASE_URL")
    ingest(source, tmp_path, rows, quarantine, "r1", privacy=TextPrivacy("hash", "salt", text))
    first = next(row for row in pq.read_table(rows).to_pylist() if row["request_id"] == "chatcmpl-01")
    assert first["tenant"].startswith("t-") and first["session_id"].startswith("s-")
    assert json.loads(first["messages_json"])[1] == {"role": "user", "chars": 2}
    reasons = {row["source_line"]: row["reason"] for row in pq.read_table(quarantine).to_pylist()}
    assert reasons[3] == "request_id chatcmpl-04: field completion_tokens: must be an integer ≥ 1"  # no value


def test_anonymize_reads_the_table_through_dsn_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str):
    from typer.testing import CliRunner

    from pipeline.cli import app

    monkeypatch.setenv("LITELLM_DATABASE_URL", dsn)
    trace = tmp_path / "trace.jsonl"
    arguments = [
        "anonymize",
        "--format",
        "litellm_spend_logs",
        "--dsn-env",
        "LITELLM_DATABASE_URL",
        "--out",
        str(trace),
    ]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert "3 lines kept, 2 rejected" in result.output and PASSWORD not in result.output
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert len(lines) == 3 and any(line.get("tenant", "").startswith("t-") for line in lines)
    assert "team-search" not in trace.read_text() and PASSWORD not in trace.read_text()
