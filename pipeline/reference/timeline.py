"""Ground truth: the server's own timeline of every request, one JSON line each, flushed as it ends.

Monotonic readings are `time.perf_counter_ns()` — CLOCK_MONOTONIC on Linux, one clock for every
process of the machine — so they compare directly with the replay's `t_*_ns` columns.

| field | meaning |
|---|---|
| `request_id` | the client's `x-loadproof-request-id` (else `x-request-id`) header; null when absent |
| `completion_id`, `endpoint`, `stream`, `fault`, `http_status`, `outcome` | what was asked and what happened |
| `arrival_ns` | monotonic, when the request reached the app (before its body was read) |
| `first_token_ns` | monotonic, just before the first token's chunk (reasoning, answer or tool call) went out |
| `first_output_ns` | monotonic, just before the first answer or tool-call chunk (after reasoning) went out |
| `end_ns` | monotonic, just before the last chunk (`[DONE]`, or the whole body) was handed to the socket |
| `arrival_unix_ns`, `end_unix_ns` | the same two instants on the wall clock (time.time_ns) |
| `*_virtual_ns` | arrival / admission / first token / end on the engine's virtual clock |
| `prompt_tokens`, `completion_tokens`, `reasoning_tokens` | model accounting (reasoning: null if none) |
| `engine_seq`, `preemptions` | admission order; how often the sequence was preempted |
| `lag_ns` | how far real time trailed the model |
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO


@dataclass
class TimelineRecord:
    request_id: str | None
    completion_id: str
    endpoint: str
    stream: bool
    arrival_ns: int
    arrival_unix_ns: int
    fault: str | None = None
    http_status: int = 200
    outcome: str = "ok"  # ok | error | fault | disconnected
    first_token_ns: int | None = None
    first_output_ns: int | None = None
    end_ns: int | None = None
    end_unix_ns: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    arrival_virtual_ns: int | None = None
    admitted_virtual_ns: int | None = None
    first_token_virtual_ns: int | None = None
    end_virtual_ns: int | None = None
    engine_seq: int | None = None
    preemptions: int = 0
    lag_ns: int | None = None
    cached_tokens: int | None = None  # prompt tokens the prefix cache held at first admission

    def mark_first_token(self, output: bool = True) -> None:
        """Before a token's chunk goes out; `output`: an answer or tool-call piece, not reasoning."""
        if self.first_token_ns is None or (output and self.first_output_ns is None):
            now = time.perf_counter_ns()
            if self.first_token_ns is None:
                self.first_token_ns = now
            if output and self.first_output_ns is None:
                self.first_output_ns = now

    def mark_end(self) -> None:
        self.end_ns = time.perf_counter_ns()
        self.end_unix_ns = time.time_ns()


class TimelineWriter:
    """Appends records to a JSONL file; a no-op when no path was given."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._handle: IO[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")

    def write(self, record: TimelineRecord) -> None:
        if self._handle is not None:
            self._handle.write(json.dumps(asdict(record), separators=(",", ":")) + "\n")
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_timeline(path: str | Path) -> list[dict]:
    """Every complete line of a timeline file (a torn last line is skipped)."""
    rows = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows
