"""OpenAI-style request-log JSONL: one JSON object per line.

    {"id": "...", "timestamp": "2026-11-02T14:00:00.378Z", "tenant": "...", "route": "...",
     "request": {"messages": [...], ...}, "response": {"usage": {"prompt_tokens": N,
     "completion_tokens": M}}, "latency_ms": 1234.5}

`id`, `tenant`, `route` and `latency_ms` are optional; timestamp and usage are required.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from pipeline.logs.canonical import IngestResult


class RejectedLine(ValueError):
    pass


def parse(path: Path) -> IngestResult:
    result = IngestResult()
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                result.rows.append(_parse_line(line, path, line_number))
            except RejectedLine as exc:
                result.reject(path, line_number, str(exc), line.rstrip("\n"))
    return result


def _parse_line(line: str, path: Path, line_number: int) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RejectedLine(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(record, dict):
        raise RejectedLine("not a JSON object")
    arrival = _timestamp(record.get("timestamp"))
    usage = (record.get("response") or {}).get("usage") if isinstance(record.get("response"), dict) else None
    if not isinstance(usage, dict):
        raise RejectedLine("field response.usage: missing")
    prompt_tokens = _positive_int(usage.get("prompt_tokens"), "response.usage.prompt_tokens")
    output_tokens = _positive_int(usage.get("completion_tokens"), "response.usage.completion_tokens")
    request = record.get("request") if isinstance(record.get("request"), dict) else {}
    messages = request.get("messages")
    if messages is not None and not (
        isinstance(messages, list) and all(isinstance(m, dict) and "role" in m for m in messages)
    ):
        raise RejectedLine("field request.messages: not a list of {role, content} objects")
    latency = record.get("latency_ms")
    if latency is not None and not isinstance(latency, (int, float)):
        raise RejectedLine("field latency_ms: not a number")
    return {
        "request_id": str(record.get("id") or f"{path.name}:{line_number}"),
        "arrival_at": arrival,
        "messages_json": json.dumps(messages, ensure_ascii=False) if messages else None,
        "prompt_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "tenant": _optional_str(record.get("tenant")),
        "route": _optional_str(record.get("route")),
        "logged_latency_ms": float(latency) if latency is not None else None,
        "source_file": str(path),
        "source_line": line_number,
    }


def _timestamp(value: object) -> datetime:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    if not isinstance(value, str):
        raise RejectedLine("field timestamp: missing or not a string/number")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise RejectedLine(f"field timestamp: not ISO-8601: {value[:40]!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _positive_int(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RejectedLine(f"field {field}: must be an integer ≥ 1, got {value!r}")
    return value


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)
