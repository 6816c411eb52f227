"""`privacy.text` below the assets: the ingest's salted identifiers and withheld reasons, the pack's
withheld tables, the previews, the spec's default (issue 17; the whole run: tests/e2e/test_privacy_canary.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assets.support.metadata import markdown_preview
from pipeline import privacy
from pipeline.contracts import CANONICAL_LOG_SCHEMA, QUARANTINE_SCHEMA
from pipeline.privacy import message_structure, private_root, withhold_text
from pipeline.spec import load_spec
from pipeline.spec.workload import LogSource
from pipeline.workload.logs.ingest import TextPrivacy, ingest
from tests.support.specs import demo_spec_dict

SECRET = "Jane Secretname jane@example.org"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"I am {SECRET}"}]


def _line(request_id: str, tenant: str, session: str, **overrides) -> str:
    record = {
        "id": request_id,
        "timestamp": "2026-11-02T14:00:00.500Z",
        "tenant": tenant,
        "route": "/chat",
        "session_id": session,
        "request": {"messages": MESSAGES, "user": SECRET},
        "response": {"usage": {"prompt_tokens": 3, "completion_tokens": 7}},
        **overrides,
    }
    return json.dumps(record)


def _log(tmp_path: Path) -> Path:
    lines = [
        _line("a", "acme", "s1"),
        _line("b", "acme", "s1"),
        _line("c", "globex", "s2"),
        '{"id": "torn", "note": "' + SECRET,
        _line("d", "acme", "s3", response={"usage": {"prompt_tokens": SECRET, "completion_tokens": 2}}),
        _line("e", "acme", "s3", timestamp=SECRET),
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _ingest(tmp_path: Path, policy: str, salt: str = "pepper", name: str = "x") -> tuple[list[dict], list[dict], Path]:
    rows, quarantine, text = (tmp_path / f"{name}-{kind}.parquet" for kind in ("rows", "quarantine", "text"))
    source = LogSource(path=str(_log(tmp_path)), format="openai_jsonl")
    ingest(source, tmp_path, rows, quarantine, "r", privacy=TextPrivacy(policy, salt, text))
    return pq.read_table(rows).to_pylist(), pq.read_table(quarantine).to_pylist(), text


def _all_text(rows: list[dict]) -> str:
    return json.dumps(rows, default=str, ensure_ascii=False)


def test_hash_keeps_structure_and_salted_identifiers_and_no_text(tmp_path: Path):
    rows, rejects, text = _ingest(tmp_path, "hash")
    assert SECRET not in _all_text(rows) and SECRET not in _all_text(rejects)
    assert "acme" not in _all_text(rows) and "/chat" not in _all_text(rows)
    tenants = [row["tenant"] for row in rows]
    assert tenants[0] == tenants[1] != tenants[2] and tenants[0].startswith("t-") and len(tenants[0]) == 18
    assert rows[0]["session_id"] == rows[1]["session_id"] != rows[2]["session_id"]
    assert json.loads(rows[0]["messages_json"]) == [{"role": "system", "chars": 9}, {"role": "user", "chars": 37}]
    assert rows[0]["prefix_hashes"] == rows[1]["prefix_hashes"] and len(rows[0]["prefix_hashes"]) == 2
    # the private copy has the text, with the same hashed identifiers
    private = pq.read_table(text).to_pylist()
    assert json.loads(private[0]["messages_json"]) == MESSAGES and private[0]["tenant"] == tenants[0]
    # reasons name line and field, never the value; no raw line
    assert {row["source_line"]: row["reason"] for row in rejects} == {
        4: "not valid JSON",
        5: "field response.usage.prompt_tokens: must be an integer ≥ 1",
        6: "field timestamp: not ISO-8601",
    }
    assert all(row["raw"] is None for row in rejects)


def test_the_salt_decides_the_hashes_and_keep_is_todays_ingest(tmp_path: Path):
    salted, _, _ = _ingest(tmp_path, "hash", "pepper", "one")
    again, _, _ = _ingest(tmp_path, "hash", "pepper", "two")
    other, _, _ = _ingest(tmp_path, "hash", "it's; DROP TABLE canonical; --", "three")  # a parameter, not SQL
    assert [r["tenant"] for r in salted] == [r["tenant"] for r in again]
    assert [r["prefix_hashes"] for r in salted] == [r["prefix_hashes"] for r in again]
    assert {r["tenant"] for r in salted}.isdisjoint({r["tenant"] for r in other})
    assert salted[0]["prefix_hashes"] != other[0]["prefix_hashes"]

    kept, kept_rejects, text = _ingest(tmp_path, "keep", name="keep")
    rows_path, quarantine_path = tmp_path / "plain-rows.parquet", tmp_path / "plain-q.parquet"
    ingest(
        LogSource(path=str(tmp_path / "log.jsonl"), format="openai_jsonl"), tmp_path, rows_path, quarantine_path, "r"
    )
    assert kept == pq.read_table(rows_path).to_pylist() and not text.exists()
    assert kept[0]["tenant"] == "acme" and json.loads(kept[0]["messages_json"]) == MESSAGES
    assert any(SECRET in (row["raw"] or "") for row in kept_rejects)
    assert any('must be an integer ≥ 1, got "Jane Secretname' in row["reason"] for row in kept_rejects)


def test_drop_removes_identifiers_and_prefix_hashes(tmp_path: Path):
    rows, _, _ = _ingest(tmp_path, "drop")
    assert all(row[key] is None for row in rows for key in ("tenant", "route", "session_id", "prefix_hashes"))
    assert json.loads(rows[0]["messages_json"])[1] == {"role": "user", "chars": 37}
    assert rows[0]["prompt_tokens"] == 3 and rows[0]["request_id"] == "a"


TOOLS = [{"type": "function", "function": {"name": "card_status", "parameters": {"type": "object"}}}]
TOOL_TURNS = [
    {"role": "user", "content": "Is my card blocked?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "card_status", "arguments": json.dumps({"who": SECRET})},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": f"card of {SECRET}: blocked"},
]


@pytest.mark.parametrize("policy", ["hash", "drop"])
def test_tool_call_arguments_and_tool_results_are_withheld_as_messages(tmp_path: Path, policy: str):
    """Tool definitions are the buyer's API (kept); the arguments of a logged tool call and a tool's
    result are customer text, withheld with the messages."""
    record = {
        "id": "t",
        "timestamp": "2026-11-02T14:00:00Z",
        "request": {"messages": TOOL_TURNS, "tools": TOOLS, "tool_choice": "auto"},
        "response": {"usage": {"prompt_tokens": 3, "completion_tokens": 7}},
    }
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(record) + "\n")
    paths = [tmp_path / f"{kind}.parquet" for kind in ("rows", "quarantine", "text")]
    source = LogSource(path=str(log), format="openai_jsonl")
    ingest(source, tmp_path, paths[0], paths[1], "r", privacy=TextPrivacy(policy, "pepper", paths[2]))
    rows = pq.read_table(paths[0]).to_pylist()
    assert SECRET not in _all_text(rows)
    assert [m["role"] for m in json.loads(rows[0]["messages_json"])] == ["user", "assistant", "tool"]
    assert json.loads(rows[0]["request_fields"]) == {"tools": TOOLS, "tool_choice": "auto"}
    assert rows[0]["structured_output"] is True
    assert SECRET in _all_text(pq.read_table(paths[2]).to_pylist())  # the private copy keeps them


def test_a_reader_reject_keeps_its_error_type_not_the_line(tmp_path: Path):
    path = tmp_path / "log.csv"
    path.write_text(f"ts,p,o\n2026-11-02T14:00:00Z,3,4\n2026-11-02T14:00:01Z,3,4,{SECRET},x\n")
    source = LogSource(
        path=str(path), format="csv", columns={"arrival": "ts", "prompt_tokens": "p", "output_tokens": "o"}
    )
    rows, quarantine = tmp_path / "rows.parquet", tmp_path / "q.parquet"
    ingest(source, tmp_path, rows, quarantine, "r", privacy=TextPrivacy("hash", "s", tmp_path / "text.parquet"))
    rejects = pq.read_table(quarantine).to_pylist()
    assert len(rejects) == 1 and rejects[0]["source_line"] == 3 and SECRET not in _all_text(rejects)


def test_withheld_tables_keep_their_columns_and_types():
    table = pa.table(
        {
            "messages_json": [json.dumps(MESSAGES), "plain prompt text", None],
            "text": [SECRET, SECRET, None],
            "reply_text": [SECRET, None, None],
            "label": ["a", "b", "c"],
        }
    )
    withheld = withhold_text(table, "hash")
    assert withheld.schema == table.schema and withheld.column("label") == table.column("label")
    assert SECRET not in _all_text(withheld.to_pylist())
    assert json.loads(withheld.column("messages_json")[1].as_py()) == [{"role": None, "chars": 17}]
    assert withhold_text(table, "keep") is table
    assert message_structure(json.dumps([{"role": "user", "content": [{"type": "text", "text": "a b"}]}])) == (
        '[{"role": "user", "chars": 30}]'
    )


def test_previews_never_show_text_columns():
    canonical = pa.Table.from_pylist(
        [{"request_id": "a", "messages_json": json.dumps(MESSAGES), "tenant": "acme"}],
        schema=pa.schema([CANONICAL_LOG_SCHEMA.field(n) for n in ("request_id", "messages_json", "tenant")]),
    )
    quarantine = pa.Table.from_pylist(
        [{"source_line": 4, "reason": "not valid JSON", "raw": SECRET}], QUARANTINE_SCHEMA
    )
    assert SECRET not in markdown_preview(canonical) + markdown_preview(quarantine)
    assert "(withheld)" in markdown_preview(quarantine) and "acme" in markdown_preview(canonical)  # keep's own id


def test_the_spec_defaults_to_hash_and_names_a_bad_value(tmp_path: Path, write_spec):
    assert load_spec(write_spec(demo_spec_dict())).spec.privacy.text == "hash"
    data = {**demo_spec_dict(), "privacy": {"text": "redact"}}
    with pytest.raises(Exception, match="privacy.text"):
        load_spec(write_spec(data))
    assert private_root(tmp_path / "pack") == (tmp_path / "pack.private").resolve()


def test_a_random_salt_is_drawn_once_per_pack_and_kept_owner_only_in_its_private_folder(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("LOADPROOF_TEST_SALT", raising=False)
    private = tmp_path / "pack.private"
    drawn = privacy.salt("LOADPROOF_TEST_SALT", private)
    assert privacy.salt("LOADPROOF_TEST_SALT", private) == drawn  # the same log hashed again: the same hashes
    kept = private / privacy.SALT_FILE
    assert kept.read_text() == drawn and kept.stat().st_mode & 0o777 == 0o600
    assert privacy.salt("LOADPROOF_TEST_SALT") != drawn  # no private folder: one salt per call
    monkeypatch.setenv("LOADPROOF_TEST_SALT", "pepper")
    assert privacy.salt("LOADPROOF_TEST_SALT", private) == "pepper"  # the variable wins, and is never kept
    assert kept.read_text() == drawn
