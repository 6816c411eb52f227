"""Writes examples/data/real_engine_requests.jsonl, demo-real's production log: the bundled demo
log's first requests scaled to what llama-server serves on two CPU cores. Each keeps its time,
tenant, route, session, system prompt (shared across requests, so the prefix cache has something
to hit) and request fields (tools, sampling, reasoning settings); the conversation is cut to the
system prompt and the last user turn (at most 400 characters) and the logged reply to at most 48
tokens. Deterministic: run it again and the file is the same.

    .venv/bin/python scripts/make_real_engine_log.py
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline import REPO_ROOT
from pipeline.tokens import count_message_tokens

SOURCE = REPO_ROOT / "examples" / "data" / "production_requests.jsonl"
TARGET = REPO_ROOT / "examples" / "data" / "real_engine_requests.jsonl"
REQUESTS = 120
USER_CHARS = 400
REPLY_TOKENS = 48


def scaled(record: dict) -> dict | None:
    request = record.get("request") or {}
    messages = request.get("messages") or []
    users = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    if not users:
        return None
    kept = [m for m in messages[:1] if m.get("role") == "system"]
    kept.append({"role": "user", "content": users[-1]["content"][:USER_CHARS]})
    usage = (record.get("response") or {}).get("usage") or {}
    reply = min(REPLY_TOKENS, int(usage.get("completion_tokens") or REPLY_TOKENS))
    out = {key: value for key, value in record.items() if key not in ("request", "response", "latency_ms")}
    out["request"] = {**request, "messages": kept, "max_tokens": REPLY_TOKENS}
    out["response"] = {"usage": {"prompt_tokens": count_message_tokens(kept), "completion_tokens": reply}}
    return out


def main() -> None:
    lines = []
    with SOURCE.open(encoding="utf-8") as source:
        for line in source:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # the demo log's deliberately bad lines stay there
            if (row := scaled(record)) is not None:
                lines.append(json.dumps(row, separators=(",", ":")))
            if len(lines) == REQUESTS:
                break
    TARGET.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{TARGET.relative_to(Path.cwd()) if TARGET.is_relative_to(Path.cwd()) else TARGET}: {len(lines)} requests")


if __name__ == "__main__":
    main()
