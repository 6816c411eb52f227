"""One chat completion, text completion or Response (`responses_wire.py`) on the reference
endpoint, from its body to the last byte (or the fault): parsing, the reply's content from the
writer, its timing from the engine loop (or at once, for an *instant* profile), the whole-JSON or
SSE streaming response, and the request's ground-truth timeline record, written before the bytes
that end the exchange go out.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Send

from pipeline.reference.agent_replies import AgentReply, AgentRequest, agent_reply, spoil_tool_call
from pipeline.reference.faults import (
    FAULT_HEADER,
    WRONG_USAGE_OFFSET,
    FaultPicker,
    UnknownFault,
    abort_connection,
    billed_prompt_tokens,
)
from pipeline.reference.generation import GenerationRequest, Writer
from pipeline.reference.openai_wire import (
    BadRequest,
    ChatRequest,
    CompletionRequest,
    Shapes,
    WholeReply,
    error_response,
    parse_body,
    usage,
)
from pipeline.reference.prefix_cache import block_hashes
from pipeline.reference.responses_wire import ResponsesShapes, parse_responses
from pipeline.reference.serving_loop import EngineLoop, SequenceHandle
from pipeline.reference.serving_model import PromptTooLong
from pipeline.reference.serving_profile import ServingProfile
from pipeline.reference.timeline import TimelineRecord, TimelineWriter
from pipeline.tokens import count_tokens, message_tokens, tokenize

REQUEST_ID_HEADERS = ("x-loadproof-request-id", "x-request-id")  # the replay sends the first
ARRIVAL_KEY = "loadproof.arrival"  # scope key: (perf_counter_ns, time_ns) at the app's door


@dataclass
class ReferenceState:
    """Everything one app instance shares between its requests."""

    profile: ServingProfile
    writer: Writer
    timeline: TimelineWriter
    faults: FaultPicker
    engine: EngineLoop | None
    version: str
    version_created: int = 0
    requests: int = field(default=0)


class _ClosingStreamingResponse(StreamingResponse):
    """Closes the body generator however the stream ends, so its `finally` runs at once."""

    async def stream_response(self, send: Send) -> None:
        try:
            await super().stream_response(send)
        finally:
            aclose = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                await aclose()


async def _instant_tokens(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


class Completion:
    """One chat completion, text completion or Response, from body to the last byte (or the fault).
    A Response is read as the chat request it amounts to; only its wire shapes differ."""

    def __init__(
        self, state: ReferenceState, request: Request, kind: Literal["chat", "completion", "responses"]
    ) -> None:
        self.state, self.request, self.kind = state, request, kind
        arrival_ns, arrival_unix_ns = request.scope.get(ARRIVAL_KEY) or (time.perf_counter_ns(), time.time_ns())
        request_id = next((request.headers[h] for h in REQUEST_ID_HEADERS if h in request.headers), None)
        prefix = {"chat": "chatcmpl", "completion": "cmpl", "responses": "resp"}[kind]
        self.record = TimelineRecord(
            request_id=request_id,
            completion_id=f"{prefix}-{uuid.uuid4().hex}",
            endpoint=kind,
            stream=False,
            arrival_ns=arrival_ns,
            arrival_unix_ns=arrival_unix_ns,
        )
        created, model = arrival_unix_ns // 1_000_000_000, state.profile.model
        self.shapes: Shapes | ResponsesShapes = (
            ResponsesShapes(self.record.completion_id, created, model)
            if kind == "responses"
            else Shapes(kind, self.record.completion_id, created, model)
        )
        self.handle: SequenceHandle | None = None
        self._written = False

    def _finish_record(self, status: int, outcome: str) -> None:
        if self._written:
            return
        self._written = True
        record = self.record
        record.http_status, record.outcome = status, outcome
        if record.end_ns is None:
            record.mark_end()
        handle = self.handle
        if handle is not None and self.state.engine is not None:
            seq = handle.seq
            record.arrival_virtual_ns, record.admitted_virtual_ns = seq.arrival_ns, seq.admitted_ns
            record.first_token_virtual_ns, record.end_virtual_ns = seq.first_token_ns, seq.end_ns
            record.engine_seq, record.preemptions, record.lag_ns = seq.seq_id, seq.preemptions, handle.lag_ns
            record.cached_tokens = seq.cached_tokens
            self.state.engine.cancel(handle)  # no-op when it finished
        self.state.timeline.write(record)

    def _refuse(self, response: Response, outcome: str = "error") -> Response:
        self._finish_record(response.status_code, outcome)
        return response

    async def respond(self) -> Response:
        state = self.state
        try:
            fault = state.faults.pick(self.request.headers.get(FAULT_HEADER))
            raw = await self.request.body()
            body: ChatRequest | CompletionRequest
            if self.kind == "responses":
                body = parse_responses(raw)
            elif self.kind == "chat":
                body = parse_body(raw, ChatRequest)
            else:
                body = parse_body(raw, CompletionRequest)
            prompt = body.prompt_text() if isinstance(body, CompletionRequest) else None
        except UnknownFault as exc:
            return self._refuse(error_response(400, str(exc), "invalid_request_error", FAULT_HEADER, "unknown_fault"))
        except BadRequest as exc:
            return self._refuse(exc.response)
        except ValueError as exc:
            return self._refuse(error_response(400, str(exc), "invalid_request_error", "prompt", "invalid_value"))
        self.record.fault, self.record.stream = fault, body.stream
        early = self._early_fault(fault, body.model)
        if early is not None:
            return early
        if fault == "reset":
            self._finish_record(0, "fault")
            abort_connection(self.request.scope)
            await asyncio.sleep(0)  # let the server see the connection lost before we return
            return Response(status_code=500)

        messages = [m.model_dump() for m in body.messages] if isinstance(body, ChatRequest) else None
        tokens = message_tokens(messages) if messages is not None else tokenize(cast(str, prompt))
        if isinstance(body, ChatRequest) and body.tools:  # the chat template writes the tools into the prompt
            tokens = tokens + tokenize(json.dumps(body.tools))
        prompt_tokens = len(tokens)
        requested = body.requested_max_tokens()
        generation = GenerationRequest(
            state.profile,
            "completion" if isinstance(body, CompletionRequest) else "chat",
            messages,
            prompt,
            state.profile.default_max_tokens if requested is None else requested,
            body.stop,
            body.temperature,
            body.seed,
        )
        reasoning = state.profile.reasoning
        if isinstance(body, ChatRequest):
            if reasoning is not None and (body.reasoning_effort or "medium") not in reasoning.effort_scale:
                known = ", ".join(reasoning.effort_scale)
                return self._refuse(
                    error_response(
                        400,
                        f"reasoning_effort {body.reasoning_effort!r} is not supported; known: {known}",
                        "invalid_request_error",
                        "reasoning_effort",
                        "invalid_value",
                    )
                )
            agent = AgentRequest(
                body.tools, body.tool_choice, body.response_format, body.reasoning_effort, body.enable_thinking
            )
            reply = agent_reply(generation, agent, state.writer, reasoning)
            if fault == "bad_tool_args":
                reply = spoil_tool_call(reply)
        else:
            reply = AgentReply([], state.writer(generation))
        completion_tokens = count_tokens(reply.answer.text) + reply.pieces - len(reply.answer.pieces)
        self.record.prompt_tokens, self.record.completion_tokens = prompt_tokens, completion_tokens
        reasoning_tokens = len(reply.reasoning) if reasoning is not None and isinstance(body, ChatRequest) else None
        self.record.reasoning_tokens = reasoning_tokens
        counts = (
            None
            if fault == "no_usage"
            else usage(
                billed_prompt_tokens(prompt_tokens, fault, state.profile.faults.overbill_fraction),
                completion_tokens + (WRONG_USAGE_OFFSET if fault == "wrong_usage" else 0),
                reasoning_tokens,
            )
        )
        if state.engine is not None and fault != "stall":
            hashes = block_hashes(tokens, state.profile.kv_block_tokens) if state.profile.prefix_cache else ()
            try:
                self.handle = state.engine.submit(
                    prompt_tokens, reply.pieces, self.record.arrival_ns, hashes, reply.constrained
                )
            except PromptTooLong as exc:
                return self._refuse(
                    error_response(400, str(exc), "invalid_request_error", "messages", "context_length_exceeded")
                )
        if body.stream:
            return _ClosingStreamingResponse(
                self._events(reply, fault, counts, body.include_usage),
                media_type="text/event-stream",
                headers={"cache-control": "no-cache"},
            )
        return await self._whole(reply, fault, counts)

    def _early_fault(self, fault: str | None, model: str) -> Response | None:
        if fault == "5xx":
            return self._refuse(
                error_response(
                    500,
                    "The server had an error while processing your request.",
                    "server_error",
                    None,
                    "internal_error",
                ),
                "fault",
            )
        if fault == "429":
            seconds = self.state.profile.faults.retry_after_s
            return self._refuse(
                error_response(
                    429,
                    "Rate limit reached; retry later.",
                    "rate_limit_error",
                    None,
                    "rate_limit_exceeded",
                    {"retry-after": str(seconds)},
                ),
                "fault",
            )
        if fault == "model_not_found" or model != self.state.profile.model:
            return self._refuse(
                error_response(
                    404, f"The model `{model}` does not exist.", "invalid_request_error", "model", "model_not_found"
                ),
                "fault" if fault else "error",
            )
        return None

    def _tokens(self, n: int) -> AsyncIterator[int]:
        return self.handle.tokens() if self.handle is not None else _instant_tokens(n)

    def _chunks(self, reply: AgentReply) -> list[tuple[bool, bytes]]:
        """Every token's SSE chunk in streaming order, each with whether it is output (an answer
        or tool-call piece) rather than reasoning."""
        field = self.state.profile.reasoning.field if self.state.profile.reasoning else "reasoning_content"
        shapes = self.shapes
        chunks = [(False, shapes.reasoning_chunk(field, piece)) for piece in reply.reasoning]
        chunks += [(True, shapes.content_chunk(piece)) for piece in reply.answer.pieces]
        if reply.tool_call is not None:
            chunks.append((True, shapes.tool_call_chunk(reply.tool_call, None)))
            chunks += [(True, shapes.tool_call_chunk(reply.tool_call, piece)) for piece in reply.tool_pieces or []]
        return chunks

    async def _events(
        self, reply: AgentReply, fault: str | None, counts: dict | None, include_usage: bool
    ) -> AsyncIterator[bytes]:
        # The record is written before the bytes that end the exchange (or carry the fault) go
        # out, so a client that has seen the end can already read it in the timeline. A
        # `buffered` fault holds every output piece until the last token (a buffering tool-call
        # parser), then sends them at once.
        try:
            role = self.shapes.role_chunk()
            if role is not None:
                yield role
            if fault == "stall":
                self._finish_record(200, "fault")
                await asyncio.sleep(self.state.profile.faults.stall_s)
                return
            chunks = self._chunks(reply)
            cut_at = len(chunks) // 2 if fault in ("cut", "malformed") else None
            held: list[bytes] = []
            async for i in self._tokens(len(chunks)):
                if i == cut_at:
                    self._finish_record(200, "fault")
                    if fault == "cut":
                        abort_connection(self.request.scope)
                    else:
                        yield b'data: {"id": "' + self.record.completion_id.encode() + b'", "choices": [\n\n'
                    return
                output, chunk = chunks[i]
                if output and fault == "buffered":
                    held.append(chunk)
                    continue
                self.record.mark_first_token(output)
                yield chunk
            if held:
                self.record.mark_first_token(True)
                yield b"".join(held)
            head, last = self.shapes.ending(
                reply.finish_reason, self._with_cached(counts) if include_usage and counts is not None else None
            )
            yield head
            self.record.mark_end()
            self._finish_record(200, "fault" if fault else "ok")
            yield last
        finally:
            if not self._written:  # the client went away first
                self._finish_record(200, "disconnected")

    async def _whole(self, reply: AgentReply, fault: str | None, counts: dict | None) -> Response:
        if fault == "stall":
            self._finish_record(0, "fault")
            await asyncio.sleep(self.state.profile.faults.stall_s)
        async for _ in self._tokens(reply.pieces):
            pass
        if fault == "cut":
            self._finish_record(0, "fault")
            abort_connection(self.request.scope)
            await asyncio.sleep(0)
            return Response(status_code=500)
        if fault == "malformed":
            self._finish_record(200, "fault")
            return Response(
                b'{"id": "' + self.record.completion_id.encode() + b'", "choices": [', media_type="application/json"
            )
        self.record.mark_first_token(True)
        self._finish_record(200, "fault" if fault else "ok")
        profile_reasoning = self.state.profile.reasoning
        reasoning = (
            (profile_reasoning.field, "".join(reply.reasoning)) if reply.reasoning and profile_reasoning else None
        )
        usage = counts and self._with_cached(counts)
        body = self.shapes.whole(WholeReply(reply.answer.text, reply.finish_reason, usage, reasoning, reply.tool_call))
        return JSONResponse(body)

    def _with_cached(self, counts: dict[str, Any]) -> dict[str, Any]:
        """Usage plus `prompt_tokens_details.cached_tokens` (OpenAI's shape) where the engine has
        a prefix cache: the prompt tokens it found cached when it first admitted the request."""
        if self.handle is None or not self.state.profile.prefix_cache:
            return counts
        return {**counts, "prompt_tokens_details": {"cached_tokens": self.handle.seq.cached_tokens or 0}}
