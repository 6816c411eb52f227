"""`loadproof anonymize`: the trace profiles as the log does, and carries no text, id or salt.

The demo log round-trips through the CLI (ingest → trace → ingest as loadproof_trace_jsonl) and
both canonical logs are profiled with pipeline/workload/profile.py. Equal exactly: every length,
arrival, burstiness, concurrency and session figure (the trace keeps arrivals to the microsecond,
lengths and logged latency/TTFT as logged, sessions and turn order). Not comparable by design:
the text-only shares (multi-turn, system-prompted, with text: the trace has no messages) and the
prefix figures of the text log, which the ingest measures on message boundaries; the trace's
prefix blocks are token blocks (what a prefix cache keys on), so its prefix figures must equal
the original's measured on the same unsalted token blocks.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference.prefix_cache import block_hashes
from pipeline.spec.workload import LogSource
from pipeline.tokens import message_tokens
from pipeline.workload.anonymize import SALT_ENV, TRACE_FORMAT
from pipeline.workload.logs import ingest_log
from pipeline.workload.logs.ingest import ingest
from pipeline.workload.profile import profile_requests
from tests.support.specs import DEMO_LOG

SALT = "pepper-5f1d2c9e-never-in-the-trace"
TEXT_ONLY = {"share_multi_turn", "share_system_prompted", "share_with_text"}
# the trace carries no request fields (tools, schemas, reasoning settings): its shares are unknown
REQUEST_FIELDS_ONLY = {"share_with_tools", "share_json_schema", "share_reasoning_setting"}
PREFIX = {"prefix_requests_with_blocks", "prefix_block_reuse_share", "prefix_share_requests_hit"}
BLOCK_TOKENS = 512


def _anonymize(log: Path, log_format: str, out: Path, *options: str):
    return CliRunner().invoke(app, ["anonymize", str(log), "--format", log_format, "--out", str(out), *options])


def _canonical(source: LogSource, folder: Path, name: str) -> Path:
    rows = folder / f"{name}.parquet"
    ingest(source, folder, rows, folder / f"{name}-quarantine.parquet")
    return rows


def _with_token_blocks(rows_path: Path) -> Path:
    """The original canonical log with its prefix blocks measured as the trace's are (unsalted)."""
    rows = pq.read_table(rows_path)
    blocks = [
        list(block_hashes(message_tokens(json.loads(text)), BLOCK_TOKENS)) if text else None
        for text in rows.column("messages_json").to_pylist()
    ]
    index = rows.schema.get_field_index("prefix_hashes")
    rows = rows.set_column(index, "prefix_hashes", pa.array(blocks, pa.list_(pa.uint64())))
    out = rows_path.with_name("token-blocks.parquet")
    pq.write_table(rows, out)
    return out


def test_demo_log_round_trips_to_the_same_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(SALT_ENV, SALT)
    trace = tmp_path / "trace.jsonl"
    result = _anonymize(DEMO_LOG, "openai_jsonl", trace)
    assert result.exit_code == 0, result.output
    assert "1875 lines kept, 2 rejected" in result.output
    assert "production_requests.jsonl:626: not valid JSON" in result.output  # file and line, as ingest says

    original_rows = _canonical(LogSource(path=str(DEMO_LOG), format="openai_jsonl"), tmp_path, "original")
    trace_rows = _canonical(LogSource(path=str(trace), format=TRACE_FORMAT), tmp_path, "trace")
    original, anonymized = profile_requests(original_rows), profile_requests(trace_rows)

    exact = set(original) - TEXT_ONLY - PREFIX - REQUEST_FIELDS_ONLY
    assert {key: anonymized[key] for key in exact} == {key: original[key] for key in exact}
    assert original["sessions"] > 0 and original["concurrency_peak_logged"] > 0  # the figures are not vacuous
    assert anonymized["share_with_text"] == 0.0  # the trace has no text, and says so
    assert all(anonymized[key] is None for key in REQUEST_FIELDS_ONLY) and original["share_with_tools"] > 0
    by_token_blocks = profile_requests(_with_token_blocks(original_rows))
    assert {key: anonymized[key] for key in PREFIX} == {key: by_token_blocks[key] for key in PREFIX}
    assert anonymized["prefix_block_reuse_share"] > 0  # the demo's shared system prompts survive


CANARIES = {
    "email": "jane.canary@example.com",
    "card": "4929 1234 5678 9012",
    "name": "Esmeralda Canarywhistle",
    "user": "user-77731-canary",
    "tenant": "acme-canary-tenant",
    "session": "conversation-canary-0042",
    "reply": "REPLY-CANARY-TEXT",
}


def _canary_log(folder: Path) -> Path:
    system = {"role": "system", "content": f"You help {CANARIES['name']}. " + "policy " * 600}
    lines = []
    for i in range(6):
        turn = {"role": "user", "content": f"My card {CANARIES['card']}, mail {CANARIES['email']} (turn {i})"}
        record = {
            "id": f"req-{CANARIES['user']}-{i}",
            "timestamp": f"2026-11-02T14:00:{i:02d}.250Z",
            "tenant": CANARIES["tenant"],
            "route": f"/chat/{CANARIES['name']}",
            "session_id": CANARIES["session"],
            "request": {
                "messages": [system, turn],
                "user": CANARIES["user"],
                "metadata": {"user_id": CANARIES["user"]},
            },
            "response": {
                "choices": [{"message": {"role": "assistant", "content": CANARIES["reply"]}}],
                "usage": {"prompt_tokens": 700 + i, "completion_tokens": 20},
            },
            "latency_ms": 900.5,
        }
        lines.append(json.dumps(record))
    lines.append(f'{{"id": "broken", "note": "{CANARIES["email"]}"')  # a bad line: quarantined, never traced
    path = folder / "log.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _canary_csv(folder: Path) -> Path:
    path = folder / "log.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ts", "p", "o", "who", "prompt"])
        for i in range(4):
            writer.writerow([i * 1.5, 30, 9, CANARIES["email"], f"{CANARIES['name']} card {CANARIES['card']}"])
    return path


def _assert_clean(text: str) -> None:
    for kind, canary in CANARIES.items():
        assert canary not in text, kind
    # fragments that no hash can spell by chance (a bare "4929" turns up in a random salt's hashes)
    for fragment in ("Esmeralda", "jane.canary", "4929 1234", "policy", "canary"):
        assert fragment.lower() not in text.lower(), fragment


@pytest.mark.parametrize("salted", [True, False], ids=["salt-from-env", "salt-drawn"])
def test_no_text_identifier_or_salt_in_the_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, salted: bool):
    if salted:
        monkeypatch.setenv(SALT_ENV, SALT)
    else:
        monkeypatch.delenv(SALT_ENV, raising=False)
    trace = tmp_path / "trace.jsonl"
    result = _anonymize(_canary_log(tmp_path), "openai_jsonl", trace)
    assert result.exit_code == 0, result.output
    assert "6 lines kept, 1 rejected" in result.output
    _assert_clean(result.output)
    text = trace.read_text(encoding="utf-8")
    _assert_clean(text)
    assert SALT not in text and SALT.encode().hex() not in text

    rows = ingest_log(trace, TRACE_FORMAT).rows.to_pylist()
    assert [row["prompt_tokens"] for row in rows] == [700 + i for i in range(6)]
    assert len({row["session_id"] for row in rows}) == 1 and len({row["tenant"] for row in rows}) == 1
    # the shared system prompt's full blocks are one chain: every turn starts with the same blocks
    assert len({tuple(row["prefix_hashes"][:1]) for row in rows}) == 1 and len(rows[0]["prefix_hashes"]) >= 1


def test_a_column_log_with_plain_text_prompts(tmp_path: Path):
    trace = tmp_path / "trace.jsonl"
    columns = [
        "arrival=ts",
        "arrival_unit=s",
        "prompt_tokens=p",
        "output_tokens=o",
        "tenant=who",
        "messages_json=prompt",
    ]
    options = [item for column in columns for item in ("--column", column)]
    result = _anonymize(_canary_csv(tmp_path), "csv", trace, "--block-tokens", "2", *options)
    assert result.exit_code == 0, result.output
    _assert_clean(trace.read_text(encoding="utf-8"))
    rows = ingest_log(trace, TRACE_FORMAT).rows.to_pylist()
    assert [row["arrival_at"].timestamp() for row in rows] == [0.0, 1.5, 3.0, 4.5]
    assert len({tuple(row["prefix_hashes"]) for row in rows}) == 1 and len(rows[0]["prefix_hashes"]) > 1


def test_salt_decides_the_hashes_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    log = _canary_log(tmp_path)
    traces = []
    for salt in (SALT, SALT, "another-salt"):
        monkeypatch.setenv(SALT_ENV, salt)
        out = tmp_path / f"trace-{len(traces)}.jsonl"
        assert _anonymize(log, "openai_jsonl", out).exit_code == 0
        traces.append([json.loads(line) for line in out.read_text().splitlines()])
    assert traces[0] == traces[1]  # one salt, one trace: traces of one buyer join
    assert traces[0][0]["tenant"] != traces[2][0]["tenant"]
    assert traces[0][0]["hash_ids"] != traces[2][0]["hash_ids"]
    strip = {"tenant", "route", "session_id", "hash_ids"}
    assert [{k: v for k, v in r.items() if k not in strip} for r in traces[0]] == [
        {k: v for k, v in r.items() if k not in strip} for r in traces[2]
    ]


def test_trace_lines_are_quarantined_with_their_line_numbers(tmp_path: Path):
    path = tmp_path / "trace.jsonl"
    good = {"timestamp": 0.0, "input_length": 5, "output_length": 3, "hash_ids": [1, 2], "ttft_ms": 40.5}
    bad_ttft = {**good, "ttft_ms": "soon"}
    lines = [json.dumps(good), json.dumps({**good, "timestamp": "later"}), json.dumps(bad_ttft), "{"]
    path.write_text("\n".join(lines) + "\n")
    rows, rejects = ingest_log(path, TRACE_FORMAT).tables()
    assert rows.num_rows == 1 and rows.column("logged_ttft_ms").to_pylist() == [40.5]
    reasons = {row["source_line"]: row["reason"] for row in rejects.to_pylist()}
    assert reasons[2] == "field timestamp: missing or not a number"
    assert reasons[3] == "field ttft_ms: not a number"
    assert set(reasons) == {2, 3, 4}
