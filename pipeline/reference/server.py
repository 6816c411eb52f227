"""The reference endpoint: an OpenAI-compatible chat completions server (SSE streaming) whose
timing follows the serving model in `ServingProfile`.

Output is exactly `max_tokens` deterministic words (like vLLM's `ignore_eos`), each one token
for `pipeline.tokens.count_tokens`, cut short only by a `stop` string.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.reference.oracle import Oracle, answer_pieces
from pipeline.reference.profile import ServingProfile
from pipeline.tokens import count_message_tokens, count_tokens

PROFILE_HEADER = "x-reference-profile"
VOCABULARY = (
    "alpha", "bravo", "cargo", "delta", "ember", "falcon", "garnet", "harbor",
    "island", "jasper", "kettle", "lumen", "maple", "nectar", "orbit", "pebble",
    "quartz", "river", "saffron", "timber", "umber", "velvet", "willow", "xenon",
    "yonder", "zephyr", "atlas", "beacon", "cobalt", "dune", "echo", "fable",
)  # fmt: skip


# --- serving performance model ---------------------------------------------------------------
# A request waits (FIFO) for one of `max_running_seqs` slots, spends
# `prompt_tokens * prefill_ms_per_token` in prefill (which yields its first token), then one
# decode step per further token; a step slows down with the number of running sequences.


def prefill_ms(profile: ServingProfile, prompt_tokens: int) -> float:
    """Prefill time of one request, in milliseconds."""
    return max(prompt_tokens, 0) * profile.prefill_ms_per_token


def decode_step_ms(profile: ServingProfile, running: int) -> float:
    """Time of one decode step (one output token) with `running` sequences holding a slot."""
    return profile.decode_ms_per_token * (1 + profile.decode_slowdown_per_seq * (max(running, 1) - 1))


async def _sleep_ms(ms: float) -> None:
    if ms > 0:  # the zero profile never touches the timer
        await asyncio.sleep(ms / 1000.0)


class Scheduler:
    """Per-app admission control and timing; one instance serves every request of an app."""

    def __init__(self, profile: ServingProfile) -> None:
        self.profile = profile
        self._slots = asyncio.Semaphore(profile.max_running_seqs)
        self.running = 0
        self.waiting = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one running-sequence slot; queued requests are admitted in arrival order."""
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._slots.release()

    async def prefill(self, prompt_tokens: int) -> None:
        """Sleep for the prefill of `prompt_tokens` tokens."""
        await _sleep_ms(prefill_ms(self.profile, prompt_tokens))

    async def decode_step(self) -> None:
        """Sleep for one decode step at the current batch size."""
        await _sleep_ms(decode_step_ms(self.profile, self.running))


# --- OpenAI request/response ---------------------------------------------------------------


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[Any] | None = None


class _StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """The part of an OpenAI chat completions body that the reference endpoint reads."""

    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[_Message] = Field(min_length=1)
    stream: bool = False
    stream_options: _StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=0)
    max_completion_tokens: int | None = Field(default=None, ge=0)
    stop: str | list[str] | None = None
    temperature: float | None = Field(default=None, ge=0)


def generate_pieces(profile: ServingProfile, messages: list[dict], n_tokens: int,
                    stop: str | list[str] | None) -> tuple[list[str], str]:
    """The content deltas of one reply and its finish reason ("stop" or "length").

    Words come from a RNG seeded with `profile.seed` plus a sha256 of the messages; each piece
    is one word (with a leading space after the first). A stop string cuts the text just before
    its first occurrence (the stop string itself is not returned).
    """
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode("utf-8")).digest()
    rng = random.Random(profile.seed + int.from_bytes(digest[:8], "big"))
    pieces = [(" " if i else "") + rng.choice(VOCABULARY) for i in range(n_tokens)]
    stops = [s for s in ([stop] if isinstance(stop, str) else stop or []) if s]
    text = "".join(pieces)
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    if cut < 0:
        return pieces, "length"
    kept: list[str] = []
    used = 0
    for piece in pieces:
        if used >= cut:
            break
        kept.append(piece[: cut - used])
        used += len(piece)
    return kept, "stop"


def _error(status: int, message: str, type_: str, param: str | None, code: str) -> JSONResponse:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return JSONResponse(body, status_code=status)


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def _sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {data}\n\n".encode("utf-8")


class _ClosingStreamingResponse(StreamingResponse):
    """Closes the body generator however the stream ends, so its `finally` runs at once."""

    async def stream_response(self, send: Send) -> None:
        try:
            await super().stream_response(send)
        finally:
            aclose = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                await aclose()


class _ProfileHeader:
    """ASGI middleware: every HTTP response names the serving profile."""

    def __init__(self, app: ASGIApp, name: str) -> None:
        self.app = app
        self.value = name.encode("latin-1", "replace")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), (PROFILE_HEADER.encode(), self.value)]
            await send(message)

        await self.app(scope, receive, send_with_header)


def build_app(profile: ServingProfile) -> Starlette:
    """A Starlette app serving `/health`, `/v1/models` and `/v1/chat/completions`."""
    scheduler = Scheduler(profile)
    oracle = Oracle(profile.oracle) if profile.oracle else None

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def models(request: Request) -> Response:
        card = {"id": profile.model, "object": "model", "created": 0,
                "owned_by": "loadproof", "version": profile.version}
        return JSONResponse({"object": "list", "data": [card]})

    async def chat_completions(request: Request) -> Response:
        try:
            raw = await request.json()
        except (ValueError, UnicodeDecodeError):
            return _error(400, "request body is not valid JSON", "invalid_request_error", None, "invalid_json")
        if not isinstance(raw, dict):
            return _error(400, "request body must be a JSON object", "invalid_request_error", None, "invalid_body")
        try:
            body = ChatRequest.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            param = ".".join(str(part) for part in first["loc"]) or None
            return _error(400, f"{param}: {first['msg']}", "invalid_request_error", param, "invalid_value")
        if body.model != profile.model:
            return _error(404, f"The model `{body.model}` does not exist.", "invalid_request_error",
                          "model", "model_not_found")

        messages = [m.model_dump() for m in body.messages]
        prompt_tokens = count_message_tokens(messages)
        max_tokens = body.max_completion_tokens if body.max_completion_tokens is not None else body.max_tokens
        n_tokens = profile.default_max_tokens if max_tokens is None else max_tokens
        answer = oracle.answer(messages) if oracle else None
        if answer is not None:
            pieces, finish_reason = answer_pieces(answer, n_tokens)
        else:
            pieces, finish_reason = generate_pieces(profile, messages, n_tokens, body.stop)
        completion_tokens = count_tokens("".join(pieces))
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())

        if not body.stream:
            async with scheduler.slot():
                await scheduler.prefill(prompt_tokens)
                for _ in pieces[1:]:
                    await scheduler.decode_step()
            return JSONResponse({
                "id": completion_id, "object": "chat.completion", "created": created,
                "model": profile.model,
                "choices": [{"index": 0, "finish_reason": finish_reason, "logprobs": None,
                             "message": {"role": "assistant", "content": "".join(pieces)}}],
                "usage": _usage(prompt_tokens, completion_tokens),
            })

        include_usage = bool(body.stream_options and body.stream_options.include_usage)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return _sse({"id": completion_id, "object": "chat.completion.chunk", "created": created,
                         "model": profile.model,
                         "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

        async def events() -> AsyncIterator[bytes]:
            async with scheduler.slot():  # released on normal end, error or client disconnect
                await scheduler.prefill(prompt_tokens)
                yield chunk({"role": "assistant", "content": ""})
                for i, piece in enumerate(pieces):
                    if i:
                        await scheduler.decode_step()
                    yield chunk({"content": piece})
            yield chunk({}, finish_reason)
            if include_usage:
                yield _sse({"id": completion_id, "object": "chat.completion.chunk", "created": created,
                            "model": profile.model, "choices": [],
                            "usage": _usage(prompt_tokens, completion_tokens)})
            yield _sse("[DONE]")

        return _ClosingStreamingResponse(events(), media_type="text/event-stream",
                                         headers={"cache-control": "no-cache"})

    app = Starlette(routes=[
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
    ])
    app.state.profile = profile
    app.state.scheduler = scheduler
    app.add_middleware(_ProfileHeader, name=profile.name)
    return app
