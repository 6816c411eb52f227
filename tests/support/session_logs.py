"""A small OpenAI-style log with three 3-turn sessions (three ways of writing a session id and a
conversation) and four session-less requests; helpers that take it through ingest, sample, plan."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

from pipeline.plan.replay_plan import build_plan
from pipeline.spec.workload import LogSource, Replay, Sample
from pipeline.workload.logs.ingest import ingest
from pipeline.workload.sampling import draw_sample

T0 = datetime(2026, 11, 2, 14, 0, tzinfo=UTC)
SYSTEM = {"role": "system", "content": "You are the support assistant of a retail bank."}


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _line(
    request_id: str, offset_s: float, messages: list[dict], output_tokens: int, latency_ms: float | None = None, **extra
) -> dict:
    record = {
        "id": request_id,
        "timestamp": (T0 + timedelta(seconds=offset_s)).isoformat().replace("+00:00", "Z"),
        "request": {"messages": messages},
        "response": {"usage": {"prompt_tokens": 10 * len(messages), "completion_tokens": output_tokens}},
        **extra,
    }
    if latency_ms is not None:
        record["latency_ms"] = latency_ms
    return record


def session_log_lines() -> list[dict]:
    """Session `s-a`: full conversation per request (logged replies inside), `session_id`, latency
    logged. Session `s-b`: new messages only (system prompt repeated), `metadata.conversation_id`,
    no latency. Session 7: `request.metadata.session_id` as an integer, its lines out of order."""
    a1 = [SYSTEM, _user("My card was declined at Tesco. Why?")]
    a2 = [*a1, {"role": "assistant", "content": "A logged reply about the card."}, _user("It happened again today.")]
    a3 = [*a2, {"role": "assistant", "content": "Another logged reply."}, _user("Can you unblock it now please?")]
    c1 = [_user("How long does a transfer to Spain take?")]
    c2 = [*c1, {"role": "assistant", "content": "Two days."}, _user("And the fee?")]
    c3 = [*c2, {"role": "assistant", "content": "Free."}, _user("Thanks, and to India?")]
    lines = [
        _line("a1", 0.0, a1, 6, 500.0, session_id="s-a"),
        _line("x1", 0.2, [_user("What is my balance?")], 5, 300.0),
        _line("c1", 0.5, c1, 4, 200.0),
        _line("b1", 1.0, [SYSTEM, _user("I want to change my PIN.")], 5, metadata={"conversation_id": "s-b"}),
        _line("x2", 1.5, [_user("Where is the nearest branch?")], 5, 300.0),
        _line("b2", 2.0, [SYSTEM, _user("The app says my PIN is locked.")], 4, metadata={"conversation_id": "s-b"}),
        _line("a2", 3.0, a2, 5, 400.0, session_id="s-a"),
        _line("x3", 3.5, [_user("Order a new card.")], 5, 300.0),
        _line("b3", 4.0, [SYSTEM, _user("Now it works, thank you.")], 3, metadata={"conversation_id": "s-b"}),
        _line("c3", 5.0, c3, 5, 200.0),  # written before c2: turn order is arrival order
        _line("x4", 5.5, [_user("Close my savings account.")], 5, 300.0),
        _line("c2", 2.5, c2, 4, 200.0),
        _line("a3", 6.5, a3, 4, 300.0, session_id="s-a"),
    ]
    for line in lines:
        if line["id"].startswith("c"):
            line["request"]["metadata"] = {"session_id": 7}
    return lines


# logged think times: this arrival − (previous arrival + previous logged latency)
EXPECTED_THINK_S = {"a2": 2.5, "a3": 3.1, "b2": 1.0, "b3": 2.0, "c2": 1.8, "c3": 2.3}
SESSIONS = {"s-a": ["a1", "a2", "a3"], "s-b": ["b1", "b2", "b3"], "7": ["c1", "c2", "c3"]}


def write_session_log(folder: Path, lines: list[dict] | None = None) -> Path:
    path = folder / "sessions.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in (lines or session_log_lines())) + "\n")
    return path


def session_plan(
    folder: Path, replay: Replay, sample: Sample | None = None, lines: list[dict] | None = None
) -> pa.Table:
    """The log → canonical Parquet → sample → replay plan."""
    log = write_session_log(folder, lines)
    rows, quarantine = folder / "canonical.parquet", folder / "quarantine.parquet"
    ingest(LogSource(path=str(log), format="openai_jsonl"), folder, rows, quarantine)
    drawn, _window = draw_sample(rows, sample or Sample(mode="busiest_window", window_s=60))
    return build_plan(drawn, replay)
