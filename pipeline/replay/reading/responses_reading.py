"""How a `/v1/responses` stream (OpenAI's Responses API, served by vLLM too) is read: its typed
events into the one record path every API shares (`reply_reading.ReplyReader`).

Each SSE event names its type twice, in the `event:` line and in its data's `type`; the data is
read (both transports hand the reader the data alone). The shapes, from the event types of
openai-python (`src/openai/types/responses/`: `response_text_delta_event.py`,
`response_reasoning_text_delta_event.py`, `response_function_call_arguments_delta_event.py`,
`response_output_item_added_event.py`, `response_usage.py`, `response.py`, `response_error_event.py`,
`response_failed_event.py`) and vLLM's server (`vllm/entrypoints/openai/responses/
simple_streaming_events.py`, `api_router.py`'s `_convert_stream_to_sse_events`: `event: <type>`,
then `data: <json>`, no `[DONE]`):

- tokens: `response.output_text.delta` (answer text, `delta`), `response.reasoning_text.delta`
  and `response.reasoning_summary_text.delta` (reasoning, `delta`), a `function_call` item's
  `response.output_item.added` (the call's name, and any first arguments vLLM puts there) and
  `response.function_call_arguments.delta` (argument pieces); a call is told apart by its
  `output_index`. Every other event (created, in_progress, content_part.*, *.done) holds no token.
- the end: `response.completed` or `response.incomplete`, whose `response.usage` gives
  `input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens` and
  `output_tokens_details.reasoning_tokens`; the stream ends there (no `[DONE]`; one that follows
  is ignored). The Responses API has no finish reason: it is put in chat's words, so the same
  checks read it — `stop` (completed), `tool_calls` (completed with a function call), `length`
  (incomplete for `max_output_tokens`), else the incomplete reason as given.
- failures: an `error` event, or `response.failed` (its `response.error`): `stream_error_event`.
"""

from __future__ import annotations

import json

from pipeline.replay.reading.reply_reading import DONE, ERROR_BODY_CHARS, ReplyReader, StreamError

REASONING_EVENTS = frozenset({"response.reasoning_text.delta", "response.reasoning_summary_text.delta"})
ENDING_EVENTS = frozenset({"response.completed", "response.incomplete"})
INCOMPLETE_REASONS = {"max_output_tokens": "length"}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _detail(usage: dict, details: str, key: str) -> int | None:
    part = usage.get(details)
    return _count(part.get(key)) if isinstance(part, dict) else None


class ResponsesReader(ReplyReader):
    """The typed events of one streamed Response (module docstring); usage comes whether or not
    it was asked for, on the last event."""

    usage_unasked = True
    end_marker = "response.completed"

    def feed(self, data: str, now_ns: int) -> None:
        if self.done or data == DONE:
            self.done = True
            return
        event = self.json_object(data, "event")
        kind = event.get("type")
        if kind == "response.output_text.delta":
            self.record(now_ns, content=event.get("delta"))
        elif kind in REASONING_EVENTS:
            self.record(now_ns, reasoning=event.get("delta"))
        elif kind == "response.function_call_arguments.delta":
            self.record(now_ns, calls=[(_count(event.get("output_index")), None, event.get("delta"))])
        elif kind == "response.output_item.added":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call":
                pieces = [(_count(event.get("output_index")), item.get("name"), item.get("arguments"))]
                self.record(now_ns, calls=pieces)
        elif kind in ENDING_EVENTS:
            self._ended(event.get("response"))
        elif kind == "response.failed":
            response = event.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            raise StreamError("stream_error_event", json.dumps(error)[:ERROR_BODY_CHARS], server_text=True)
        elif kind == "error":
            error = event.get("error") if isinstance(event.get("error"), dict) else event
            raise StreamError("stream_error_event", json.dumps(error)[:ERROR_BODY_CHARS], server_text=True)

    def _ended(self, response: object) -> None:
        """The last event's response: its usage and status (as chat's finish reason)."""
        if not isinstance(response, dict):
            raise StreamError("malformed_sse", "the last event carries no response object")
        usage = response.get("usage")
        if isinstance(usage, dict):
            self.usage(
                _count(usage.get("input_tokens")),
                _count(usage.get("output_tokens")),
                _detail(usage, "input_tokens_details", "cached_tokens"),
                _detail(usage, "output_tokens_details", "reasoning_tokens"),
            )
        if response.get("status") == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            self.outcome.finish_reason = INCOMPLETE_REASONS.get(str(reason), reason or "incomplete")
        else:
            self.outcome.finish_reason = "tool_calls" if self.tool_calls else "stop"
        self.done = True
