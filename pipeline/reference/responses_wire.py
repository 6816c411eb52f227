"""The Responses API on the reference endpoint (`POST /v1/responses`): its request read as the chat
request it amounts to (so a reply's content and timing come from the same agent and engine as
chat's), and its typed events written one per token, as vLLM writes them.

Shapes: openai-python's `types/responses/` (the events, `response.py`, `response_usage.py`) and
vLLM's `vllm/entrypoints/openai/responses/` (`simple_streaming_events.py`: a reasoning item, a
message with an `output_text` part, a `function_call` item whose `output_item.added` names the
call; `api_router.py`: `event: <type>` then `data: <json>`, no `[DONE]`). The usage is always
sent, on `response.completed` (or `response.incomplete`, cut by `max_output_tokens`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.reference.openai_wire import BadRequest, ChatRequest, WholeReply, error_response, parse_body


class ResponsesRequest(BaseModel):
    """The part of a Responses body that the reference endpoint reads."""

    model_config = ConfigDict(extra="allow")
    model: str
    input: str | list[dict[str, Any]]
    stream: bool = False
    max_output_tokens: int | None = Field(default=None, ge=0)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    text: dict[str, Any] | None = None
    reasoning: dict[str, Any] | None = None
    chat_template_kwargs: dict[str, Any] | None = None

    def chat_fields(self) -> dict[str, Any]:
        """The chat request this one amounts to (module docstring)."""
        extra = {k: v for k, v in (self.model_extra or {}).items() if k in ("temperature", "seed", "stop")}
        fields: dict[str, Any] = {
            **extra,
            "model": self.model,
            "messages": _messages(self.input),
            "stream": self.stream,
            "stream_options": {"include_usage": True},
            "max_tokens": self.max_output_tokens,
            "chat_template_kwargs": self.chat_template_kwargs,
        }
        if self.tools:
            fields["tools"] = [_chat_tool(tool) for tool in self.tools]
        if isinstance(self.tool_choice, dict) and self.tool_choice.get("name"):
            fields["tool_choice"] = {"type": "function", "function": {"name": self.tool_choice["name"]}}
        elif self.tool_choice is not None:
            fields["tool_choice"] = self.tool_choice
        text_format = (self.text or {}).get("format") or {}
        if text_format.get("type") == "json_schema":
            spec = {"name": text_format.get("name", "response"), "schema": text_format.get("schema") or {}}
            fields["response_format"] = {"type": "json_schema", "json_schema": spec}
        elif text_format.get("type") == "json_object":
            fields["response_format"] = {"type": "json_object"}
        if (self.reasoning or {}).get("effort") is not None:
            fields["reasoning_effort"] = self.reasoning["effort"]  # type: ignore[index]
        return fields


def parse_responses(raw_bytes: bytes) -> ChatRequest:
    """A Responses body as its chat request; BadRequest (400, OpenAI shape) naming the field otherwise."""
    request = parse_body(raw_bytes, ResponsesRequest)
    try:
        return ChatRequest.model_validate(request.chat_fields())
    except ValidationError as exc:
        first = exc.errors()[0]
        param = "input" if first["loc"][:1] == ("messages",) else ".".join(str(p) for p in first["loc"]) or None
        raise BadRequest(
            error_response(400, f"{param}: {first['msg']}", "invalid_request_error", param, "invalid_value")
        ) from None


def _text(content: object) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _messages(items: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses input items as chat messages."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages: list[dict[str, Any]] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _text(item.get("output"))})
        elif kind == "function_call":
            function = {"name": item.get("name", ""), "arguments": item.get("arguments", "")}
            call = {"id": item.get("call_id", ""), "type": "function", "function": function}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "message":
            messages.append({"role": item.get("role", "user"), "content": _text(item.get("content"))})
    return messages


def _chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    if tool.get("type") != "function" or "function" in tool:
        return tool
    function = {k: v for k, v in tool.items() if k in ("name", "description", "parameters", "strict")}
    return {"type": "function", "function": function}


def _usage(counts: dict[str, Any] | None) -> dict[str, Any] | None:
    """Chat's usage object in the Responses API's words."""
    if counts is None:
        return None
    cached = (counts.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    reasoning = (counts.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    return {
        "input_tokens": counts["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": counts["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": counts["total_tokens"],
    }


class ResponsesShapes:
    """Builds the events of one Response in streaming order, keeping which output item is open
    (reasoning, message, function call) and every item's text for the last event. The methods
    match `openai_wire.Shapes`', so `completion.py` streams either."""

    def __init__(self, response_id: str, created: int, model: str) -> None:
        self.id, self.created, self.model = response_id, created, model
        self.sequence = 0
        self.output: list[dict[str, Any]] = []  # every item so far, its text filled in as it streams
        self.open: str | None = None  # the type of the item being streamed

    def _event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()

    def _response(self, status: str, usage: dict[str, Any] | None = None, reason: str | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": self.model,
            "output": self.output if status != "in_progress" else [],
            "incomplete_details": {"reason": reason} if reason else None,
            "error": None,
            "usage": usage,
        }

    def _item(self, kind: str, item: dict[str, Any]) -> bytes:
        """Close the open item and open `item` (its added events)."""
        head = self._close()
        index = len(self.output)
        self.output.append(item)
        self.open = kind
        head += self._event("response.output_item.added", output_index=index, item=item)
        if kind in ("message", "reasoning"):
            part = {"type": "output_text", "text": "", "annotations": []} if kind == "message" else None
            part = part or {"type": "reasoning_text", "text": ""}
            head += self._event(
                "response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part
            )
        return head

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        index, item = len(self.output) - 1, self.output[-1]
        self.open = None
        tail = b""
        if item["type"] in ("message", "reasoning"):
            part = item["content"][0]
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            done = "response.output_text.done" if item["type"] == "message" else "response.reasoning_text.done"
            tail += self._event(done, **where, text=part["text"])
            tail += self._event("response.content_part.done", **where, part=part)
        else:
            where = {"item_id": item["id"], "output_index": index}
            tail += self._event("response.function_call_arguments.done", **where, arguments=item["arguments"])
        item["status"] = "completed"
        return tail + self._event("response.output_item.done", output_index=index, item=item)

    def _where(self) -> dict[str, Any]:
        return {"item_id": self.output[-1]["id"], "output_index": len(self.output) - 1}

    def role_chunk(self) -> bytes:
        created = self._event("response.created", response=self._response("in_progress"))
        return created + self._event("response.in_progress", response=self._response("in_progress"))

    def reasoning_chunk(self, _field: str, piece: str) -> bytes:
        head = b""
        if self.open != "reasoning":
            item = {
                "id": f"rs_{self.id}_{len(self.output)}",
                "type": "reasoning",
                "summary": [],
                "status": "in_progress",
            }
            head = self._item("reasoning", {**item, "content": [{"type": "reasoning_text", "text": ""}]})
        self.output[-1]["content"][0]["text"] += piece
        return head + self._event("response.reasoning_text.delta", **self._where(), content_index=0, delta=piece)

    def content_chunk(self, piece: str) -> bytes:
        head = b""
        if self.open != "message":
            item = {"id": f"msg_{self.id}_{len(self.output)}", "type": "message", "role": "assistant"}
            content = [{"type": "output_text", "text": "", "annotations": []}]
            head = self._item("message", {**item, "status": "in_progress", "content": content})
        self.output[-1]["content"][0]["text"] += piece
        return head + self._event("response.output_text.delta", **self._where(), content_index=0, delta=piece)

    def tool_call_chunk(self, call: dict[str, Any], arguments: str | None) -> bytes:
        """The first piece (`arguments` None) adds the function_call item, named; the rest are its
        argument deltas."""
        if arguments is None:
            item = {"id": f"fc_{call['id']}", "type": "function_call", "status": "in_progress"}
            return self._item("function_call", {**item, "call_id": call["id"], "name": call["name"], "arguments": ""})
        self.output[-1]["arguments"] += arguments
        return self._event("response.function_call_arguments.delta", **self._where(), delta=arguments)

    def ending(self, finish_reason: str, counts: dict[str, Any] | None) -> tuple[bytes, bytes]:
        """The events after the last token: the open item closed, then the last event (what ends
        the exchange), with the usage."""
        head = self._close()
        if finish_reason == "length":
            last = self._response("incomplete", _usage(counts), "max_output_tokens")
            return head, self._event("response.incomplete", response=last)
        return head, self._event("response.completed", response=self._response("completed", _usage(counts)))

    def whole(self, reply: WholeReply) -> dict[str, Any]:
        """The whole Response (not streamed)."""
        if reply.reasoning is not None:
            self.reasoning_chunk(*reply.reasoning)
        if reply.tool_call is not None:
            self.tool_call_chunk(reply.tool_call, None)
            self.tool_call_chunk(reply.tool_call, reply.tool_call["arguments"])
        elif reply.text:
            self.content_chunk(reply.text)
        self._close()
        status, reason = ("incomplete", "max_output_tokens") if reply.finish_reason == "length" else ("completed", None)
        return self._response(status, _usage(reply.counts), reason)
