"""No customer text leaves unless asked (issue 17, `privacy.text`): canary strings planted in every
text field of a log and of the accuracy slice are found nowhere under the pack folder, in its
Dagster instance (event log, compute logs) or in the CLI's output under the default (`hash`);
under `keep` they are where a keep pack holds them.

The canaries: an e-mail address, a card number and a person's name, planted in the system prompt,
the user's message, the assistant's earlier turn, the OpenAI `user` field, an end-user id in the
request's metadata, the session id, the tenant and the route of every log line, the arguments of
an assistant's tool call and the tool's result (lines without a session; their tool definitions,
kept under every setting, hold none), in two bad lines
(one not JSON, one with a bad token count: the quarantine), and in every slice item's text. The run
is the CLI's own (`loadproof run`, a real Dagster materialisation of the whole graph) against the
reference endpoint over loopback, accuracy mixed into the load (so labelled replies are recorded)
and the prefix-cache warm-up on (the log's earlier requests are kept beside the sample).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.privacy import private_root
from pipeline.reference import ReferenceServer
from tests.support.specs import DEMO_LOG, DEMO_SLICE, small_spec

pytestmark = pytest.mark.slow

EMAIL = "ada.canary@example.org"
CARD = "4111 1111 1111 1111"
NAME = "Ottilie Canarywood"
CANARIES = (EMAIL, CARD, NAME)
LOADPROOF = Path(sys.executable).with_name("loadproof")


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "card_status",
            "description": "Look up a card",
            "parameters": {"type": "object", "properties": {"holder": {"type": "string"}}},
        },
    }
]


def _tool_turns(number: int) -> list[dict]:
    """An assistant's tool call with the canaries in its arguments, and the tool's result with them."""
    call = {"name": "card_status", "arguments": json.dumps({"holder": NAME, "email": EMAIL})}
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"call-{number}", "type": "function", "function": call}],
        },
        {"role": "tool", "tool_call_id": f"call-{number}", "content": f"card {CARD} of {NAME}: active"},
    ]


def _planted_log(path: Path) -> Path:
    lines = []
    for number, line in enumerate(DEMO_LOG.read_text().splitlines(), start=1):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record.get("response"), dict):
            continue
        request = record.setdefault("request", {})
        messages = request.get("messages") or [{"role": "user", "content": "hello"}]
        messages = [{"role": "system", "content": f"Customer {NAME} <{EMAIL}>."}, *messages]
        for message in messages:
            if message.get("role") in ("user", "assistant"):
                message["content"] = f"{message.get('content', '')} My card is {CARD}, I am {NAME}."
        if not record.get("session_id"):  # a tool call whose arguments and result hold the canaries
            messages[-1:-1] = _tool_turns(number)
            request.update(tools=TOOLS, tool_choice="auto")  # the buyer's API: kept, so no canary in it
        request["messages"] = messages
        request["user"] = EMAIL
        request["metadata"] = {"end_user_id": f"{NAME} {CARD}"}
        record["tenant"] = f"tenant of {NAME}"
        record["route"] = f"/chat/{EMAIL}"
        if record.get("session_id"):
            record["session_id"] = f"{EMAIL}/{record['session_id']}"
        lines.append(json.dumps(record))
        if number == 40:  # two bad lines for the quarantine, each with every canary
            lines.append(f'{{"id": "torn", "note": "{NAME} {EMAIL} {CARD}"')
            lines.append(json.dumps({**record, "response": {"usage": {"prompt_tokens": CARD, "completion_tokens": 3}}}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _planted_slice(path: Path) -> tuple[Path, Path]:
    """The slice with the canaries in every item's text, and the reference endpoint's answer key:
    the same texts, each answered with its label and a canary (the reply echoes customer data)."""
    table = pacsv.read_csv(DEMO_SLICE)
    texts = [f"{text} ({NAME}, {EMAIL}, card {CARD})" for text in table.column("text").to_pylist()]
    table = table.set_column(table.schema.get_field_index("text"), "text", pa.array(texts))
    pacsv.write_csv(table, path)
    replies = [f"{label} (for {NAME})" for label in table.column("label").to_pylist()]
    answers = table.set_column(table.schema.get_field_index("label"), "label", pa.array(replies))
    pacsv.write_csv(answers, path.with_name("answer_key.csv"))
    return path, path.with_name("answer_key.csv")


def _run(tmp_path: Path, write_spec, policy: str | None, name: str) -> tuple[Path, bytes]:
    log, (slice_path, answer_key) = _planted_log(tmp_path / "log.jsonl"), _planted_slice(tmp_path / "slice.csv")
    oracle = tmp_path / "oracle.yaml"
    oracle.write_text(f"answer_key: {answer_key}\naccuracy: 1.0\n")
    with ReferenceServer("zero", oracle=str(oracle)) as server:
        spec = Path(small_spec(write_spec, server.base_url))
        data = yaml.safe_load(spec.read_text())
        data["workload"]["log"]["path"] = str(log)
        data["accuracy"].update(path=str(slice_path), mode="mixed", max_items=12)
        data["workload"]["replay"]["warm_prefixes"] = True  # earlier requests sent first: their text too
        if policy is not None:
            data["privacy"] = {"text": policy}
        spec.write_text(yaml.safe_dump(data, sort_keys=False))
        out = tmp_path / name
        env = {**os.environ, "LOADPROOF_DEMO_API_KEY": "k"}
        env.pop("DAGSTER_HOME", None)  # the instance goes inside the pack folder: <out>/.dagster
        done = subprocess.run(
            [str(LOADPROOF), "run", str(spec), "--out", str(out)], env=env, capture_output=True, timeout=600
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return out, done.stdout + done.stderr


def _found_in_parquet(path: Path) -> set[str]:
    """Every canary in any value of the file (pages may be compressed: read, not grepped)."""
    text = json.dumps(pq.read_table(path).to_pylist(), default=str, ensure_ascii=False)
    return {canary for canary in CANARIES if canary in text}


def _found_in_sqlite(path: Path) -> set[str]:
    found = set()
    with sqlite3.connect(path) as con:
        tables = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in con.execute(f'SELECT * FROM "{table}"'):  # noqa: S608 (names from sqlite_master)
                text = " ".join(str(value) for value in row)
                found |= {canary for canary in CANARIES if canary in text}
    return found


def _leaks(folder: Path) -> dict[str, set[str]]:
    leaks = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        found = {canary for canary in CANARIES if canary.encode() in raw}
        if path.suffix == ".parquet":
            found |= _found_in_parquet(path)
        elif raw.startswith(b"SQLite format 3"):
            found |= _found_in_sqlite(path)
        if found:
            leaks[str(path.relative_to(folder))] = found
    return leaks


def test_default_hash_keeps_no_canary_anywhere_and_keep_keeps_them(tmp_path: Path, write_spec) -> None:
    out, output = _run(tmp_path, write_spec, None, "pack")
    files = [p for p in out.rglob("*") if p.is_file()]
    assert (out / "evidence_pack.json").exists() and any(".dagster" in p.parts for p in files)
    assert any(p.suffix == ".parquet" for p in files) and any(p.suffix == ".html" for p in files)
    assert any(p.read_bytes()[:15] == b"SQLite format 3" for p in files)  # the instance's event log was searched
    assert _leaks(out) == {}
    assert [c for c in CANARIES if c.encode() in output] == []
    assert (
        f"customer text (privacy.text hash): none in the pack; the copy the replay sent is in {private_root(out)}"
        in (output.decode())
    )

    # the profile still sees tenants, sessions and prefix reuse through the salted hashes
    logs = pq.read_table(out / "data" / "production_logs.parquet").to_pylist()
    assert {row["tenant"] for row in logs} == {logs[0]["tenant"]} and logs[0]["tenant"].startswith("t-")
    assert any(row["session_id"] for row in logs) and any(row["prefix_hashes"] for row in logs)
    quarantine = pq.read_table(out / "data" / "quarantine.parquet").to_pylist()
    assert len(quarantine) >= 2 and all(row["raw"] is None for row in quarantine)
    assert any("must be an integer" in row["reason"] for row in quarantine)
    results = pq.read_table(out / "data" / "accuracy_results.parquet").to_pylist()
    assert len(results) == 12 and all(r["correct"] for r in results) and all(r["reply"] is None for r in results)

    # the replay sent the real text: the private folder beside the pack holds it, owner-only
    private = private_root(out)
    assert private.is_dir() and (private.stat().st_mode & 0o077) == 0
    assert _found_in_parquet(private / "data" / "replay_plan.parquet") == set(CANARIES)
    warm = json.loads((private / "data" / "production_sample.json").read_text())["warm_prefixes"]
    assert warm and all(NAME in row["messages_json"] for row in warm)  # the warm-up sent them with their text

    verified = subprocess.run([str(LOADPROOF), "verify", str(out)], capture_output=True)
    assert verified.returncode == 0, verified.stdout.decode()[-3000:]  # a withheld pack still verifies

    kept, _ = _run(tmp_path, write_spec, "keep", "kept")
    assert _found_in_parquet(kept / "data" / "production_sample.parquet") == set(CANARIES)
    assert _found_in_parquet(kept / "data" / "labelled_slice.parquet") == set(CANARIES)
    # the replies echoed the name (a choice scorer still reads the label in them)
    assert _found_in_parquet(kept / "data" / "accuracy_results.parquet") == {NAME}
    assert _found_in_parquet(kept / "data" / "raw_timings.parquet") == {NAME, EMAIL}  # and the session ids
    assert not private_root(kept).exists()
