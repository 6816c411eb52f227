"""Requests as logged: a log's request fields (tools, tool_choice, response_format, temperature,
top_p, reasoning_effort, seed, stop) arrive at the endpoint as logged, and the spec's
`workload.replay.request` overrides (set, drop) are honoured. The endpoint is a small recording
server on loopback, polled on its health route before the replay starts."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pipeline.plan.replay_plan import build_plan, planned_requests
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal
from pipeline.spec.workload import Replay
from pipeline.workload.logs import ingest_log

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "card_status",
            "description": "Look up a card",
            "parameters": {"type": "object", "properties": {"card_id": {"type": "string"}}, "required": ["card_id"]},
        },
    }
]
SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "intent", "schema": {"type": "object", "properties": {"intent": {"type": "string"}}}},
}
LOGGED = {
    "tools": TOOLS,
    "tool_choice": "auto",
    "response_format": SCHEMA_FORMAT,
    "temperature": 0.7,
    "top_p": 0.9,
    "reasoning_effort": "high",
    "seed": 42,
    "stop": ["\n\n", "END"],
}
REPLY = (
    b'data: {"choices": [{"index": 0, "delta": {"content": "ok"}}]}\n\n'
    b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    b'data: {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}\n\n'
    b"data: [DONE]\n\n"
)


class Recorder(BaseHTTPRequestHandler):
    bodies: list[dict]

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.endswith("/models"):
            self._send(200, json.dumps({"object": "list", "data": [{"id": "m"}]}).encode(), "application/json")
        else:  # /health
            self._send(200, b"ok", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.server.bodies.append(json.loads(self.rfile.read(length)))  # type: ignore[attr-defined]
        self._send(200, REPLY, "text/event-stream")


@pytest.fixture()
def recording_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/health"
    for _ in range(200):  # poll health: up as soon as serve_forever runs
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    break
        except OSError:
            continue
    yield server
    server.shutdown()
    server.server_close()


def _log(tmp_path: Path) -> Path:
    lines = []
    for index in range(3):
        record = {
            "id": f"r{index}",
            "timestamp": f"2026-11-02T14:00:0{index}Z",
            "request": {"messages": [{"role": "user", "content": f"Is card {index} blocked?"}], **LOGGED},
            "response": {"usage": {"prompt_tokens": 9, "completion_tokens": 4}},
        }
        lines.append(json.dumps(record))
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _replay(tmp_path: Path, server: ThreadingHTTPServer, replay: Replay) -> list[dict]:
    rows = ingest_log(_log(tmp_path), "openai_jsonl").rows
    plan = build_plan(rows, replay)
    target = Target("recorder", f"http://127.0.0.1:{server.server_address[1]}/v1", "m")
    with Journal(tmp_path / "journal.jsonl") as journal:
        stats = run_replay(
            planned_requests(plan), target, ReplaySettings(mode="concurrency", concurrency=1), "r", journal
        )
    assert stats.sent == 3 and stats.errors == 0
    return server.bodies  # type: ignore[attr-defined]


def test_every_logged_request_field_arrives_as_logged(tmp_path: Path, recording_server):
    bodies = _replay(tmp_path, recording_server, Replay(mode="concurrency", concurrency=1))
    assert len(bodies) == 3
    for body in bodies:
        assert {key: body[key] for key in LOGGED} == LOGGED
        assert body["model"] == "m" and body["stream"] is True and body["max_tokens"] == 4


def test_spec_overrides_set_and_drop_are_honoured(tmp_path: Path, recording_server):
    rules = {"temperature": {"set": 0}, "tools": "drop", "tool_choice": "drop", "seed": "keep"}
    bodies = _replay(tmp_path, recording_server, Replay(mode="concurrency", concurrency=1, request=rules))
    for body in bodies:
        assert body["temperature"] == 0 and "tools" not in body and "tool_choice" not in body
        assert body["seed"] == 42 and body["response_format"] == SCHEMA_FORMAT and body["reasoning_effort"] == "high"


def test_unknown_or_replay_owned_fields_are_refused_with_the_known_names():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="unknown request field.*temprature.*known: tools"):
        Replay(request={"temprature": "drop"})
    with pytest.raises(ValidationError, match="max_completion_tokens: never sent"):
        Replay(request={"max_completion_tokens": {"set": 10}})
    with pytest.raises(ValidationError):
        Replay(request={"temperature": "zero"})
