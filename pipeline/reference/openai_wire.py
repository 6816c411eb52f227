"""OpenAI wire shapes of the reference endpoint: request bodies, response objects, SSE, errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import JSONResponse


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[Any] | None = None


class _StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class _Common(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    stream: bool = False
    stream_options: _StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=0)
    stop: str | list[str] | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | None = None
    n: int = Field(default=1, ge=1, le=1, description="only one choice is supported")

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


class ChatRequest(_Common):
    """The part of an OpenAI chat completions body that the reference endpoint reads."""

    messages: list[_Message] = Field(min_length=1)
    max_completion_tokens: int | None = Field(default=None, ge=0)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    reasoning_effort: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None

    @property
    def enable_thinking(self) -> bool | None:
        """`chat_template_kwargs.enable_thinking` (Qwen3's and vLLM's switch), when given."""
        value = (self.chat_template_kwargs or {}).get("enable_thinking")
        return value if isinstance(value, bool) else None

    def requested_max_tokens(self) -> int | None:
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens


class CompletionRequest(_Common):
    """The part of an OpenAI (legacy) completions body that the reference endpoint reads."""

    prompt: str | list[str]

    def requested_max_tokens(self) -> int | None:
        return self.max_tokens

    def prompt_text(self) -> str:
        if isinstance(self.prompt, str):
            return self.prompt
        if len(self.prompt) != 1:
            raise ValueError("prompt: exactly one prompt string is supported")
        return self.prompt[0]


Body = TypeVar("Body", bound=BaseModel)


class BadRequest(Exception):
    """A request the endpoint refuses; carries its OpenAI error response."""

    def __init__(self, response: JSONResponse) -> None:
        super().__init__(response.body)
        self.response = response


def error_response(
    status: int, message: str, type_: str, param: str | None, code: str | None, headers: dict[str, str] | None = None
) -> JSONResponse:
    """An error in OpenAI's JSON shape: {"error": {message, type, param, code}}."""
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def parse_body(raw_bytes: bytes, model_type: type[Body]) -> Body:
    """Validate a request body; BadRequest (400, OpenAI shape) naming the field otherwise."""
    try:
        raw = json.loads(raw_bytes)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest(
            error_response(400, "request body is not valid JSON", "invalid_request_error", None, "invalid_json")
        ) from None
    if not isinstance(raw, dict):
        raise BadRequest(
            error_response(400, "request body must be a JSON object", "invalid_request_error", None, "invalid_body")
        )
    try:
        return model_type.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        param = ".".join(str(part) for part in first["loc"]) or None
        raise BadRequest(
            error_response(400, f"{param}: {first['msg']}", "invalid_request_error", param, "invalid_value")
        ) from None


def usage(prompt_tokens: int, completion_tokens: int, reasoning_tokens: int | None = None) -> dict[str, Any]:
    """OpenAI's usage object; with `reasoning_tokens`, its `completion_tokens_details` too (they
    are part of `completion_tokens`)."""
    counts: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reasoning_tokens is not None:
        counts["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return counts


def sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {data}\n\n".encode()


@dataclass(frozen=True)
class WholeReply:
    """A reply sent whole (not streamed), as each API's shapes (`Shapes`, `ResponsesShapes`) write
    it: `counts`, the usage (None: not reported); `reasoning`, (its field name, its text);
    `tool_call`: id, name, arguments."""

    text: str
    finish_reason: str
    counts: dict[str, Any] | None
    reasoning: tuple[str, str] | None = None
    tool_call: dict[str, Any] | None = None


class Shapes:
    """Builds the objects of one reply, chat or text completion, streamed or whole."""

    def __init__(self, kind: str, completion_id: str, created: int, model: str) -> None:
        self.kind, self.id, self.created, self.model = kind, completion_id, created, model

    def _head(self, obj: str) -> dict[str, Any]:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model}

    def role_chunk(self) -> bytes | None:
        if self.kind != "chat":
            return None
        return self.delta_chunk({"role": "assistant", "content": ""})

    def content_chunk(self, piece: str) -> bytes:
        if self.kind == "chat":
            return self.delta_chunk({"content": piece})
        return sse(
            {
                **self._head("text_completion"),
                "choices": [{"index": 0, "text": piece, "logprobs": None, "finish_reason": None}],
            }
        )

    def reasoning_chunk(self, field: str, piece: str) -> bytes:
        """One reasoning piece, under the profile's field (`reasoning_content` or `reasoning`)."""
        return self.delta_chunk({field: piece})

    def ending(self, finish_reason: str, counts: dict[str, Any] | None) -> tuple[bytes, bytes]:
        """The chunks after the last token: the finish chunk and, with `counts`, the usage chunk;
        then what ends the exchange, `[DONE]`."""
        head = self.finish_chunk(finish_reason) + (self.usage_chunk(counts) if counts is not None else b"")
        return head, sse("[DONE]")

    def tool_call_chunk(self, call: dict[str, Any], arguments: str | None) -> bytes:
        """One streamed tool-call piece: the first (`arguments` None) names the call, as OpenAI's
        does — index, id, type and the function's name with empty arguments; the rest carry
        argument text under the same index."""
        if arguments is None:
            piece = {
                "index": 0,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
        else:
            piece = {"index": 0, "function": {"arguments": arguments}}
        return self.delta_chunk({"tool_calls": [piece]})

    def finish_chunk(self, finish_reason: str) -> bytes:
        if self.kind == "chat":
            return self.delta_chunk({}, finish_reason)
        return sse(
            {
                **self._head("text_completion"),
                "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": finish_reason}],
            }
        )

    def delta_chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(
            {
                **self._head("chat.completion.chunk"),
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
        )

    def usage_chunk(self, counts: dict[str, Any]) -> bytes:
        obj = "chat.completion.chunk" if self.kind == "chat" else "text_completion"
        return sse({**self._head(obj), "choices": [], "usage": counts})

    def whole(self, reply: WholeReply) -> dict[str, Any]:
        """The whole reply."""
        if self.kind == "chat":
            tool_call = reply.tool_call
            message: dict[str, Any] = {"role": "assistant", "content": None if tool_call else reply.text}
            if reply.reasoning is not None:
                message[reply.reasoning[0]] = reply.reasoning[1]
            if tool_call is not None:
                function = {"name": tool_call["name"], "arguments": tool_call["arguments"]}
                message["tool_calls"] = [{"id": tool_call["id"], "type": "function", "function": function}]
            choice = {"index": 0, "finish_reason": reply.finish_reason, "logprobs": None, "message": message}
            body = {**self._head("chat.completion"), "choices": [choice]}
        else:
            choice = {"index": 0, "finish_reason": reply.finish_reason, "logprobs": None, "text": reply.text}
            body = {**self._head("text_completion"), "choices": [choice]}
        if reply.counts is not None:
            body["usage"] = reply.counts
        return body
