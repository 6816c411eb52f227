"""How a streamed reply is read, whatever HTTP client carried it (httpx or aiohttp) and whatever
OpenAI API it answers (chat and text completions here, the Responses API in `responses_reading.py`).

Both transports (`request.py`, `aio_request.py`) hand this module the same things — an HTTP
status with its body and Retry-After header, then the stream's SSE data payloads one by one with
their arrival instant — so both record the same error types, counts and flags. Only the mapping of
each client's own exceptions (connect, read, reset, cut) stays with the transport.

`error_type` values (status `error`): `http_4xx`, `http_5xx`, `http_429` (Retry-After kept in
`retry_after_s`), `model_not_found` (a 404 whose OpenAI error code says so), `connect_error`,
`connection_reset` (closed before any response), `stream_cut` (closed mid-stream, after the
headers), `stream_incomplete` (ended cleanly but without `[DONE]`), `malformed_sse`,
`stream_error_event`, `total_timeout`, `read_timeout`, `connect_timeout`, …

Usage problems do not fail a request — its tokens arrived and its timings are valid — so they
are flagged in `usage_issue` instead (status stays `ok`):
- `usage_missing`: no usage object although `stream_options.include_usage` was asked (llama.cpp's
  server, for one, never sends it in streams); output tokens then come from the plan's tokenizer
  where it is a real one, else from the content-chunk count (records.output_count, recorded in
  `output_tokens_source`).
- `usage_mismatch`: the reported `completion_tokens` cannot be right, whatever the tokenizer:
  fewer than the content chunks received, or different from `max_tokens` when the stream
  finished for `length`. The server's figure is kept in `output_tokens` (server-reported where
  given) and the flag tells the analysis not to trust it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence

import orjson

from pipeline.replay.recording.records import SERVER_TIMING_FIELDS, RequestOutcome
from pipeline.tokens import count_tokens
from pipeline.tokens.tokenizers import Tokenizer, reply_counter

ERROR_BODY_CHARS = 300
DONE = "[DONE]"


class StreamError(Exception):
    """A typed failure of one exchange; `server_text`: the message is the server's own text (an
    HTTP error's body, an error event), which may quote the request back."""

    def __init__(self, error_type: str, message: str, server_text: bool = False):
        super().__init__(message)
        self.error_type = error_type
        self.server_text = server_text

    def record(self, outcome: RequestOutcome) -> None:
        """This failure on the outcome, with whether its message is the server's own text."""
        outcome.error_type, outcome.error_message = self.error_type, str(self)
        outcome.error_from_server = self.server_text


def withhold_server_text(outcome: RequestOutcome) -> None:
    """Under privacy.text hash or drop: the server's own error text gives way to its length (a
    validation error may echo the prompt); the error type and HTTP status stay."""
    if outcome.error_from_server and outcome.error_message:
        outcome.error_message = f"the server's error text withheld (privacy.text): {len(outcome.error_message)} chars"


# what the replay sets itself, whatever the log carried
REPLAY_OWNED_FIELDS = frozenset(
    {"model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "min_tokens", "ignore_eos"}
)


def chat_body(
    model: str,
    messages: list[dict],
    max_tokens: int,
    min_tokens: int | None = None,
    request_fields: dict | None = None,
) -> dict:
    """A streamed chat request. The logged `request_fields` (tools, tool_choice, response_format,
    temperature, ...: the plan's, after the spec's overrides) go in first; model, messages, stream
    and stream_options are the replay's own, and so is the output length: `max_tokens` is the
    planned one and a logged max_completion_tokens (or max_tokens) is not sent, since vLLM takes
    max_completion_tokens over max_tokens. With `min_tokens`, also vLLM's `min_tokens` and
    `ignore_eos`, so the reply has the logged output length on servers that honour them."""
    logged = {key: value for key, value in (request_fields or {}).items() if key not in REPLAY_OWNED_FIELDS}
    body = {
        **logged,
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if min_tokens is not None:
        body.update(min_tokens=min_tokens, ignore_eos=True)
    return body


def http_error(outcome: RequestOutcome, status: int, body: str, retry_after: str | None) -> StreamError:
    """A non-200 reply as a typed error; its Retry-After (429, 503) is kept on the outcome."""
    outcome.retry_after_s = retry_after_s(retry_after)
    return StreamError(http_error_type(status, body), body[:ERROR_BODY_CHARS], server_text=True)


def http_error_type(status: int, body: str = "") -> str:
    if status == 429:
        return "http_429"
    if status == 404 and _error_code(body) == "model_not_found":
        return "model_not_found"
    return f"http_{status // 100}xx"


def _error_code(body: str) -> str | None:
    """The `error.code` of an OpenAI-shaped error body, if it is one."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    return error.get("code") if isinstance(error, dict) else None


def retry_after_s(value: str | None) -> float | None:
    """Retry-After in seconds (the delta-seconds form; an HTTP date is not converted)."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def cached_tokens(usage: dict) -> int | None:
    """`usage.prompt_tokens_details.cached_tokens` (OpenAI's shape, vLLM's and the reference
    endpoint's): the prompt tokens the server's prefix cache held; None where it does not say."""
    details = usage.get("prompt_tokens_details")
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def reasoning_tokens(usage: dict) -> int | None:
    """`usage.completion_tokens_details.reasoning_tokens` (OpenAI's shape; vLLM's with a reasoning
    parser), part of `completion_tokens`; None where the server does not say."""
    details = usage.get("completion_tokens_details")
    value = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def server_timings(timings: dict) -> dict[str, float | int]:
    """The numbers of a server's per-request `timings` (llama.cpp's server: prompt tokens prefilled
    and read from the cache, prefill and decode milliseconds, tokens decoded) by raw-timing column;
    fields it does not send, or sends as something other than a number, are left out."""
    return {
        column: value
        for key, column in SERVER_TIMING_FIELDS.items()
        if isinstance(value := timings.get(key), int | float) and not isinstance(value, bool)
    }


# where a chunk's delta carries reasoning text: vLLM, SGLang, DeepSeek and llama.cpp write
# `reasoning_content`; OpenRouter and vLLM's newer parsers `reasoning`
REASONING_KEYS = ("reasoning_content", "reasoning")


class ReplyReader:
    """The one record path every API's reader feeds (`StreamReader` for chat, `CompletionsReader`,
    `responses_reading.ResponsesReader`): an API's reader only says what each event carried.

    Every event that carries a token of any kind is one arrival in `chunk_times_ns` (TTFT, ITL and
    TPOT run over all of them): answer text, reasoning text and tool-call pieces (the name and
    argument pieces of each call, by its index). The first answer or tool-call event is also
    `t_first_output_ns` (TTFO)."""

    # the API reports usage whether or not `stream_options.include_usage` was asked (Responses)
    usage_unasked = False
    end_marker = "[DONE]"  # what says the stream is whole

    def __init__(self, outcome: RequestOutcome):
        self.outcome = outcome
        self.text_parts: list[str] = []  # the answer
        self.reasoning_parts: list[str] = []
        self.tool_calls: dict[int, dict[str, str]] = {}  # index -> {"name", "arguments"}
        self.done = False

    def feed(self, data: str, now_ns: int) -> None:
        """One SSE event's data payload, arrived at `now_ns`."""
        raise NotImplementedError

    @staticmethod
    def json_object(data: str, what: str = "chunk") -> dict:
        """An event's payload as a JSON object; `malformed_sse` otherwise."""
        try:  # orjson: a third of the stdlib's CPU; what it refuses (NaN, a lone surrogate) the stdlib judges
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            try:
                payload = json.loads(data)
            except json.JSONDecodeError:
                raise StreamError("malformed_sse", f"{what} is not JSON: {data[:80]!r}") from None
        if not isinstance(payload, dict):
            raise StreamError("malformed_sse", f"{what} is not a JSON object")
        return payload

    def record(
        self,
        now_ns: int,
        reasoning: str | None = None,
        content: str | None = None,
        calls: Sequence[tuple[int | None, str | None, str | None]] = (),
    ) -> None:
        """The tokens one event carried, of each kind, stamped with its arrival; `calls`: each
        tool-call piece as (index, name piece, arguments piece), index None for the next call."""
        outcome = self.outcome
        reasoning = reasoning if isinstance(reasoning, str) and reasoning else None
        content = content if isinstance(content, str) and content else None
        if reasoning:
            self.reasoning_parts.append(reasoning)
            outcome.reasoning_chunks += 1
        if content:
            self.text_parts.append(content)
        tool_text = False  # a tool-call piece with text (a name or arguments): an id-only piece holds no token
        for index, name, arguments in calls:
            piece = self.tool_calls.setdefault(
                len(self.tool_calls) if index is None else index, {"name": "", "arguments": ""}
            )
            for key, text in (("name", name), ("arguments", arguments)):
                if isinstance(text, str) and text:
                    piece[key] += text
                    tool_text = True
        if tool_text:
            outcome.tool_call_chunks += 1
        if reasoning or content or tool_text:
            outcome.chunk_times_ns.append(now_ns)
            if (content or tool_text) and outcome.t_first_output_ns is None:
                outcome.t_first_output_ns = now_ns

    def usage(
        self,
        prompt_tokens: int | None,
        output_tokens: int | None,
        cached: int | None = None,
        reasoning: int | None = None,
    ) -> None:
        """The server's token counts (usage), whatever the API named them."""
        outcome = self.outcome
        outcome.prompt_tokens, outcome.output_tokens = prompt_tokens, output_tokens
        outcome.cached_tokens, outcome.reasoning_tokens = cached, reasoning

    @property
    def streamed_text(self) -> list[str]:
        """Every token's text the stream carried, one string per kind: reasoning, answer, each tool
        call's name and its arguments (counted apart: their tokens do not run into each other)."""
        calls = [part for call in self.tool_calls.values() for part in (call["name"], call["arguments"])]
        return [part for part in ("".join(self.reasoning_parts), "".join(self.text_parts), *calls) if part]

    def end(self) -> None:
        """The body ended cleanly: it must have said it was done (`[DONE]`, or the API's last event)."""
        if not self.done:
            raise StreamError("stream_incomplete", f"stream ended before {self.end_marker}")


class StreamReader(ReplyReader):
    """`/v1/chat/completions`: `choices[].delta` carries answer text (`content`), reasoning text
    (`reasoning_content` / `reasoning`) and tool-call pieces (`tool_calls`, each by its `index`);
    a last chunk carries `usage` (`stream_options.include_usage`), then `[DONE]`."""

    def feed(self, data: str, now_ns: int) -> None:
        """One event's data; after `[DONE]` the rest is read but ignored (the connection then
        goes back to the pool)."""
        if self.done or data == DONE:
            self.done = True
            return
        payload = self.json_object(data)
        if "error" in payload:
            raise StreamError("stream_error_event", json.dumps(payload["error"])[:ERROR_BODY_CHARS], server_text=True)
        usage = payload.get("usage")
        if isinstance(usage, dict):
            prompt, output = usage.get("prompt_tokens"), usage.get("completion_tokens")
            self.usage(prompt, output, cached_tokens(usage), reasoning_tokens(usage))
        timings = payload.get("timings")
        if isinstance(timings, dict):
            self.outcome.server_timings = server_timings(timings)
        for choice in payload.get("choices") or []:
            if not isinstance(choice, dict):
                raise StreamError("malformed_sse", "choice is not a JSON object")
            self.choice_tokens(choice, now_ns)
            if choice.get("finish_reason"):
                self.outcome.finish_reason = choice["finish_reason"]

    def choice_tokens(self, choice: dict, now_ns: int) -> None:
        """The tokens one choice of a chunk carries."""
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise StreamError("malformed_sse", "delta is not a JSON object")
        reasoning = next((v for k in REASONING_KEYS if isinstance(v := delta.get(k), str) and v), None)
        calls = delta.get("tool_calls")
        pieces = []
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                function = call["function"] if isinstance(call.get("function"), dict) else {}
                index = call.get("index") if isinstance(call.get("index"), int) else None
                pieces.append((index, function.get("name"), function.get("arguments")))
        self.record(now_ns, reasoning, delta.get("content"), pieces)


class CompletionsReader(StreamReader):
    """`/v1/completions` (legacy; `vllm bench serve`'s default): chat's chunks, usage and
    `[DONE]`, with the answer text in `choices[].text` (no delta, no reasoning, no tool calls)."""

    def choice_tokens(self, choice: dict, now_ns: int) -> None:
        self.record(now_ns, content=choice.get("text"))


def finish(outcome: RequestOutcome, body: dict, reader: ReplyReader) -> RequestOutcome:
    """End time, the client's own token counts and, for a reply that ended well, its usage flag.
    The client's output count covers every token streamed (reasoning and tool calls are output
    tokens too); `reply_text` is the answer alone."""
    outcome.t_end_ns = time.perf_counter_ns()
    outcome.reply_text = "".join(reader.text_parts)  # the engine records it for labelled requests only
    outcome.streamed_text = reader.streamed_text
    outcome.reasoning_text = "".join(reader.reasoning_parts)
    outcome.output_tokens_client = sum(count_tokens(part) for part in outcome.streamed_text)
    outcome.tool_calls = len(reader.tool_calls)
    outcome.tool_call_pieces = list(reader.tool_calls.values())
    if outcome.error_type is None:
        usage_asked = reader.usage_unasked or bool((body.get("stream_options") or {}).get("include_usage"))
        cap = body.get("max_tokens", body.get("max_output_tokens"))  # max_output_tokens: Responses
        outcome.usage_issue = usage_issue(outcome, cap, usage_asked)
    return outcome


def reply_counters(plan) -> dict[str | None, Tokenizer]:
    """The real tokenizer of each setting the plan names (its `tokenizer` column), loaded once per
    process; loadproof-approx and a server's endpoint have none (the replay makes no HTTP call
    to count), so their replies without usage fall back to the content chunks."""
    settings = {item.tokenizer for item in plan}
    return {setting: counter for setting in settings if (counter := reply_counter(setting)) is not None}


def count_reply(outcome: RequestOutcome, counter: Tokenizer | None, every_reply: bool = False) -> None:
    """Where usage is missing, the streamed text's count under a real tokenizer as the client's
    count (`output_tokens` takes it: records.output_count); where usage does not give the
    reasoning tokens, the reasoning text's count under it too. Only there: a GGUF vocabulary takes
    ~1 ms per 300 tokens, in the replay's event loop, which a server that reports usage need not pay
    — unless `every_reply` (the tokenizer is the candidate's own, `Target.tokenizer`): then the bill
    check compares usage with this count, so every reply pays it."""
    if counter is None:
        return
    if (every_reply or outcome.output_tokens is None) and outcome.streamed_text is not None:
        outcome.output_tokens_client = sum(counter.count_text(part) for part in outcome.streamed_text)
        outcome.output_tokens_counter = counter.name
    if outcome.reasoning_tokens is None and outcome.reasoning_text:
        outcome.reasoning_tokens_counted = counter.count_text(outcome.reasoning_text)
        outcome.reasoning_tokens_counter = counter.name


# A keep-alive connection the server closed just after its last reply, taken from the pool before
# the close reached the client: llama.cpp's server closes every connection after a streamed reply
# (its chunked writer ends the stream by "failing") while its headers say keep-alive. The request
# never reached the server, so it is sent again on another connection and its send stamped there;
# `t_send_call_ns` stays at the first call, so the detour shows as time before the send, never
# inside TTFT or E2E. Every idle pooled connection can be stale at once (the pool opened before the
# first send, and each stream's own, outlive the server's 5 s keep-alive): two re-sends were not
# enough at 8 in flight (a fresh-clone run failed on the third stale one). Each stale attempt
# drops its connection from the pool, and an attempt on a connection of its own ends the loop; the
# bound is a backstop. Only a request the server did not take is sent again (`request_not_taken`):
# a reset (RST) after the whole request was written is a server dropping a request it may have
# taken (the reference endpoint's `reset` fault), recorded as `connection_reset`, never re-sent.
STALE_CONNECTION_RETRIES = 256


def stale_connection(outcome: RequestOutcome) -> bool:
    """No response on a connection the request did not open (a pooled one), which the server had
    closed before taking the request (`RequestOutcome.request_not_taken`)."""
    return (
        outcome.error_type == "connection_reset"
        and outcome.http_status is None
        and outcome.connect_ns is None
        and outcome.request_not_taken
    )


async def sent_past_stale_connections(send_once: Callable[[], Awaitable[RequestOutcome]]) -> RequestOutcome:
    """One request sent by `send_once` (a transport's single attempt: httpx's or aiohttp's), and
    sent again on another connection where a pooled one turned out closed (`stale_connection`), at
    most STALE_CONNECTION_RETRIES times; `t_send_call_ns` is the first attempt's own (so a request
    sent once keeps its stamps as its one attempt made them: nothing written, `t_sent_ns` equal)."""
    first = outcome = await send_once()
    for _ in range(STALE_CONNECTION_RETRIES):
        if not stale_connection(outcome):
            break
        outcome = await send_once()
    outcome.t_send_call_ns = first.t_send_call_ns
    return outcome


def usage_issue(outcome: RequestOutcome, max_tokens: int | None, usage_asked: bool) -> str | None:
    """`usage_missing`, `usage_mismatch` or None for a stream that ended well (module docstring)."""
    if outcome.output_tokens is None:
        return "usage_missing" if usage_asked else None
    if outcome.output_tokens < len(outcome.chunk_times_ns):
        return "usage_mismatch"
    if outcome.finish_reason == "length" and max_tokens is not None and outcome.output_tokens != max_tokens:
        return "usage_mismatch"
    return None
