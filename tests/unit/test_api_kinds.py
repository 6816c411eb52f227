"""The API kinds (`api`: chat, completions, responses): each one's request body built from the
same planned request, and the Responses reader event by event — TTFT at the first token event of
any kind, TTFO at the first answer or tool-call event, the end and the failures it recognises."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from pipeline.replay.pacing.engine import Target
from pipeline.replay.reading.reply_reading import StreamError, chat_body, finish
from pipeline.replay.recording.records import RequestOutcome
from pipeline.replay.transport.api_kinds import (
    REQUEST_BODIES,
    completion_prompt,
    completions_body,
    responses_body,
    stream_reader,
)
from pipeline.spec.candidates import Candidate
from resources import EndpointResource

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "api_streams"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "strict": True,
    },
}
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}
FIELDS = {
    "tools": [WEATHER],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA, "strict": True}},
    "reasoning_effort": "low",
    "temperature": 0.2,
    "logprobs": True,
    "max_completion_tokens": 999,  # the log's cap: never sent
}


def _outcome() -> RequestOutcome:
    return RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)


def test_chat_is_the_default_and_unchanged():
    assert REQUEST_BODIES["chat"]("m", MESSAGES, 8, 8, FIELDS) == chat_body("m", MESSAGES, 8, 8, FIELDS)
    assert Candidate.model_fields["api"].default == "chat"


def test_a_completion_sends_the_messages_as_one_plain_prompt_without_chat_only_fields():
    body = completions_body("m", MESSAGES, 8, 8, FIELDS)
    assert body["prompt"] == completion_prompt(MESSAGES) == "system: Be brief.\n\nuser: Weather in Paris?"
    assert (body["max_tokens"], body["stream"], body["stream_options"]) == (8, True, {"include_usage": True})
    assert (body["min_tokens"], body["ignore_eos"], body["temperature"]) == (8, True, 0.2)
    assert body["response_format"] == FIELDS["response_format"]  # vLLM honours it on completions
    assert not {"messages", "tools", "tool_choice", "reasoning_effort", "logprobs", "max_completion_tokens"} & set(body)
    parts = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert completion_prompt(parts) == "a b"  # one message: its text as it is (a vendor's prompt stays its length)


def test_a_response_request_speaks_the_responses_apis_names():
    body = responses_body("m", MESSAGES, 8, 8, FIELDS)
    assert body["input"] == MESSAGES and body["max_output_tokens"] == 8 and body["stream"] is True
    assert body["tools"] == [{"type": "function", **WEATHER["function"]}]  # flattened: name at the top
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["text"] == {"format": {"type": "json_schema", "name": "reply", "schema": SCHEMA, "strict": True}}
    assert body["reasoning"] == {"effort": "low"} and body["ignore_eos"] is True and body["temperature"] == 0.2
    left_out = {"messages", "max_tokens", "stream_options", "response_format", "reasoning_effort", "logprobs"}
    assert not left_out & set(body) and "min_tokens" not in body and "max_completion_tokens" not in body
    assert responses_body("m", MESSAGES, 8, None, {"response_format": {"type": "json_object"}})["text"] == {
        "format": {"type": "json_object"}
    }
    assert "text" not in responses_body("m", MESSAGES, 8, None, {"response_format": {"type": "text"}})


def test_a_conversation_with_tool_calls_becomes_responses_items():
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    assert responses_body("m", messages, 8)["input"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    ]


def test_each_api_is_sent_to_its_own_path_and_the_spec_refuses_others():
    urls = {api: Target("c", "http://h/v1/", "m", api=api).request_url for api in ("chat", "completions", "responses")}
    assert urls == {
        "chat": "http://h/v1/chat/completions",
        "completions": "http://h/v1/completions",
        "responses": "http://h/v1/responses",
    }
    assert Target("c", "http://h/v1", "m", api="responses").chat_url == "http://h/v1/chat/completions"  # the probes
    candidate = {"name": "c", "base_url": "http://h/v1", "model": "m", "price": {"usd_per_hour": 1.0}}
    assert Candidate.model_validate({**candidate, "api": "responses"}).api == "responses"
    target = EndpointResource().target(Candidate.model_validate({**candidate, "api": "completions"}))
    assert target.request_url == "http://h/v1/completions"  # the spec's api reaches the replay
    with pytest.raises(ValidationError, match="api"):
        Candidate.model_validate({**candidate, "api": "grpc"})


def _payloads(name: str) -> list[str]:
    return [line[6:] for line in (STREAMS / name).read_text().splitlines() if line.startswith("data: ")]


def test_a_recorded_reasoning_tool_call_read_event_by_event_puts_ttfo_after_ttft():
    """Each event stamped with its own place in the stream: TTFT at the first reasoning summary
    event, TTFO at the added function call, every argument piece an arrival after it."""
    payloads = _payloads("openai-stream-multi-tool-conversation-responses-reasoning-past-reasoning-1.sse")
    types = [json.loads(p)["type"] for p in payloads]
    outcome = _outcome()
    reader = stream_reader("responses", outcome)
    for index, payload in enumerate(payloads):
        reader.feed(payload, index)
    reader.end()
    first_thought = types.index("response.reasoning_summary_text.delta")
    call_added = next(i for i, p in enumerate(payloads) if '"type":"function_call"' in p and types[i].endswith("added"))
    assert outcome.chunk_times_ns[0] == first_thought < outcome.t_first_output_ns == call_added
    last_piece = max(i for i, kind in enumerate(types) if kind == "response.function_call_arguments.delta")
    assert outcome.chunk_times_ns[-1] == last_piece and outcome.finish_reason == "tool_calls"
    finish(outcome, responses_body("m", MESSAGES, 2048), reader)
    assert outcome.usage_issue is None and outcome.reasoning_text and "search" in outcome.streamed_text


def _completed(status: str = "completed", **response) -> str:
    usage = {
        "input_tokens": 4,
        "input_tokens_details": {"cached_tokens": 2},
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 1},
        "total_tokens": 7,
    }
    kind = "response.completed" if status == "completed" else "response.incomplete"
    return json.dumps({"type": kind, "response": {"status": status, "usage": usage, **response}})


def _delta(kind: str, text: str) -> str:
    return json.dumps({"type": f"response.{kind}.delta", "delta": text, "output_index": 0})


def test_a_response_cut_by_max_output_tokens_finishes_for_length_and_its_usage_is_read():
    outcome = _outcome()
    reader = stream_reader("responses", outcome)
    events = [_delta("reasoning_text", "hm"), _delta("output_text", "a"), _delta("output_text", " b")]
    events += [_completed("incomplete", incomplete_details={"reason": "max_output_tokens"}), "[DONE]", "{late"]
    for at, event in enumerate(events, start=1):
        reader.feed(event, at)
    reader.end()
    assert (outcome.finish_reason, outcome.prompt_tokens, outcome.output_tokens) == ("length", 4, 3)
    assert (outcome.cached_tokens, outcome.reasoning_tokens, outcome.chunk_times_ns) == (2, 1, [1, 2, 3])
    assert outcome.t_first_output_ns == 2
    finish(outcome, responses_body("m", MESSAGES, 3), reader)
    assert outcome.usage_issue is None and outcome.reply_text == "a b"
    finish(outcome, responses_body("m", MESSAGES, 5), reader)  # cut for length below its cap: not right
    assert outcome.usage_issue == "usage_mismatch"


def test_a_response_without_its_last_event_is_incomplete_and_without_usage_is_flagged():
    outcome = _outcome()
    reader = stream_reader("responses", outcome)
    reader.feed(_delta("output_text", "a"), 1)
    with pytest.raises(StreamError, match="ended before"):
        reader.end()
    reader.feed(json.dumps({"type": "response.completed", "response": {"status": "completed", "usage": None}}), 2)
    reader.end()
    finish(outcome, responses_body("m", MESSAGES, 8), reader)  # usage always comes on this API
    assert outcome.usage_issue == "usage_missing" and outcome.finish_reason == "stop"


@pytest.mark.parametrize(
    "event, text",
    [
        ({"type": "error", "code": "server_error", "message": "boom", "param": None}, "boom"),
        ({"type": "response.failed", "response": {"status": "failed", "error": {"code": "x", "message": "no"}}}, "no"),
    ],
)
def test_an_error_or_failed_response_is_a_stream_error_event(event: dict, text: str):
    reader = stream_reader("responses", _outcome())
    with pytest.raises(StreamError, match=text) as failure:
        reader.feed(json.dumps(event), 1)
    assert failure.value.error_type == "stream_error_event" and failure.value.server_text


def test_a_responses_event_that_is_not_json_is_malformed():
    with pytest.raises(StreamError) as failure:
        stream_reader("responses", _outcome()).feed("{nope", 1)
    assert failure.value.error_type == "malformed_sse"
