"""The bundled reference endpoint: OpenAI wire shape, token accounting, errors, scheduling."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from httpx_sse import connect_sse

from pipeline.reference import ReferenceServer, ServingProfile, build_app, load_profile
from pipeline.reference.generation import generate_pieces
from pipeline.reference.launch import check_loopback, serve
from pipeline.reference.serving_model import EngineCore, Sequence, decode_step_ms, prefill_ms
from pipeline.tokens import count_message_tokens, count_tokens

MODEL = "reference-model"
MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Summarise the quarterly report, please."},
]


def _profile(**overrides: object) -> ServingProfile:
    fields = {
        "name": "t",
        "prefill_ms_per_token": 0.5,
        "decode_ms_per_token": 10.0,
        "decode_slowdown_per_seq": 0.1,
        "max_running_seqs": 2,
    }
    return ServingProfile(**{**fields, **overrides})


def _stream(client: httpx.Client, body: dict) -> list[dict | str]:
    events: list[dict | str] = []
    with connect_sse(client, "POST", "/chat/completions", json=body) as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        for sse in source.iter_sse():
            events.append(sse.data if sse.data == "[DONE]" else json.loads(sse.data))
    return events


def test_health(server: ReferenceServer) -> None:
    response = httpx.get(f"{server.root_url}/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers["x-reference-profile"] == "zero"
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"


def test_models_list_shape(client: httpx.Client) -> None:
    body = client.get("/models").json()
    assert body["object"] == "list"
    [card] = body["data"]
    assert card["id"] == MODEL and card["object"] == "model"
    assert card["version"] == "2026-11-01"


def test_streaming_chat_emits_exactly_max_tokens(client: httpx.Client) -> None:
    events = _stream(
        client,
        {
            "model": MODEL,
            "messages": MESSAGES,
            "stream": True,
            "max_tokens": 17,
            "stream_options": {"include_usage": True},
        },
    )
    assert events[-1] == "[DONE]"
    chunks = [e for e in events[:-1] if isinstance(e, dict)]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    contents = [
        c["choices"][0]["delta"]["content"]
        for c in chunks[1:]
        if c["choices"] and c["choices"][0]["delta"].get("content")
    ]
    assert len(contents) == 17
    assert count_tokens("".join(contents)) == 17
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == []
    expected_prompt = count_message_tokens(MESSAGES)
    assert usage_chunk["usage"] == {
        "prompt_tokens": expected_prompt,
        "completion_tokens": 17,
        "total_tokens": expected_prompt + 17,
    }


def test_streaming_without_include_usage_has_no_usage_chunk(client: httpx.Client) -> None:
    events = _stream(client, {"model": MODEL, "messages": MESSAGES, "stream": True, "max_completion_tokens": 3})
    assert events[-1] == "[DONE]"
    assert all(e["choices"] and "usage" not in e for e in events[:-1])
    assert sum(1 for e in events[:-1] if e["choices"][0]["delta"].get("content")) == 3


def test_non_streaming_chat_usage_and_determinism(client: httpx.Client) -> None:
    request = {"model": MODEL, "messages": MESSAGES, "max_tokens": 9, "temperature": 0.7}
    first, second = client.post("/chat/completions", json=request), client.post("/chat/completions", json=request)
    assert first.status_code == 200
    body = first.json()
    assert body["object"] == "chat.completion"
    [choice] = body["choices"]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["role"] == "assistant"
    assert count_tokens(choice["message"]["content"]) == 9
    assert body["usage"]["completion_tokens"] == 9
    assert body["usage"]["prompt_tokens"] == count_message_tokens(MESSAGES)
    assert second.json()["choices"][0]["message"]["content"] == choice["message"]["content"]


def test_default_max_tokens_comes_from_profile(client: httpx.Client) -> None:
    body = client.post("/chat/completions", json={"model": MODEL, "messages": MESSAGES}).json()
    assert body["usage"]["completion_tokens"] == load_profile("zero").default_max_tokens


def test_unknown_model_is_404_in_openai_error_shape(client: httpx.Client) -> None:
    response = client.post("/chat/completions", json={"model": "gpt-nope", "messages": MESSAGES})
    assert response.status_code == 404
    assert response.headers["x-reference-profile"] == "zero"
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "model_not_found"


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        json.dumps({"model": MODEL}).encode(),
        json.dumps({"model": MODEL, "messages": []}).encode(),
        json.dumps({"model": MODEL, "messages": MESSAGES, "max_tokens": -1}).encode(),
        json.dumps([1, 2]).encode(),
    ],
)
def test_bad_body_is_400_in_openai_error_shape(client: httpx.Client, content: bytes) -> None:
    response = client.post("/chat/completions", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"


def test_stop_string_truncates(client: httpx.Client) -> None:
    pieces, _ = generate_pieces(load_profile("zero"), MESSAGES, 12, None)
    full = "".join(pieces)
    stop = pieces[5]  # " word": the sixth word with its leading space
    expected = full[: full.find(stop)]
    request = {"model": MODEL, "messages": MESSAGES, "max_tokens": 12, "stop": [stop]}
    body = client.post("/chat/completions", json=request).json()
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["choices"][0]["message"]["content"] == expected
    assert body["usage"]["completion_tokens"] == count_tokens(expected) < 12

    events = _stream(client, {**request, "stream": True})
    streamed = "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-1] if e["choices"])
    assert streamed == expected
    assert [e["choices"][0]["finish_reason"] for e in events[:-1] if e["choices"]][-1] == "stop"


def test_generated_words_are_single_tokens() -> None:
    pieces, reason = generate_pieces(load_profile("demo"), MESSAGES, 200, None)
    assert reason == "length" and len(pieces) == 200
    assert all(p.strip().isalnum() and p.strip().islower() for p in pieces)
    assert count_tokens("".join(pieces)) == 200
    assert pieces[0] == pieces[0].strip() and all(p.startswith(" ") for p in pieces[1:])


def test_load_profile_unknown_name_lists_available() -> None:
    with pytest.raises(ValueError) as info:
        load_profile("nope")
    assert "demo" in str(info.value) and "zero" in str(info.value)


def test_load_profile_from_path(tmp_path) -> None:
    path = tmp_path / "custom.yaml"
    path.write_text(
        "name: custom\nprefill_ms_per_token: 1\ndecode_ms_per_token: 2\n"
        "decode_slowdown_per_seq: 0\nmax_running_seqs: 4\n"
    )
    profile = load_profile(str(path))
    assert profile.name == "custom" and profile.max_running_seqs == 4
    assert load_profile("demo").max_running_seqs == 16


def test_profile_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError):
        _profile(batch_size=8)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_non_loopback_host_refused(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        serve(host, 8100, "zero")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_hosts_accepted(host: str) -> None:
    assert check_loopback(host) == host


def test_server_that_fails_to_start_reports_stderr() -> None:
    with pytest.raises(RuntimeError, match="available"):
        ReferenceServer("nope").start()


def test_decode_step_formula() -> None:
    profile = _profile()
    assert decode_step_ms(profile, 1) == pytest.approx(10.0)
    assert decode_step_ms(profile, 2) == pytest.approx(11.0)
    assert decode_step_ms(profile, 11) == pytest.approx(20.0)
    assert prefill_ms(profile, 100) == pytest.approx(50.0)
    zero = load_profile("zero")
    assert decode_step_ms(zero, 500) == 0 and prefill_ms(zero, 10_000) == 0


def test_scheduler_admits_fifo_and_counts_running() -> None:
    core = EngineCore(_profile(max_running_seqs=2))
    for i in range(5):
        core.add(Sequence(i, prompt_tokens=10, output_tokens=3, arrival_ns=0))
    admitted: list[int] = []
    now = 0
    while not core.idle:
        step = core.step(now)
        now = step.end_ns
        assert len(core.running) <= 2
        admitted.extend(s.seq_id for s in core.running if s.seq_id not in admitted)
    assert admitted == [0, 1, 2, 3, 4]
    assert core.kv_used == 0


def test_slot_released_when_client_disconnects() -> None:
    """A stream cut off mid-decode gives its slot back (the decode step would take ~17 min)."""
    app = build_app(_profile(prefill_ms_per_token=0, decode_ms_per_token=1e6, max_running_seqs=1))
    core = app.state.engine.core

    async def scenario() -> int:
        first_token = asyncio.Event()
        body = json.dumps({"model": MODEL, "messages": MESSAGES, "stream": True, "max_tokens": 5})
        messages = [{"type": "http.request", "body": body.encode(), "more_body": False}]
        held_during_stream: list[int] = []

        async def receive() -> dict:
            if messages:
                return messages.pop(0)
            await first_token.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            if (
                message["type"] == "http.response.body"
                and b'"content":"' in message.get("body", b"")
                and b'"content":""' not in message["body"]
            ):
                held_during_stream.append(len(core.running))
                first_token.set()

        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/v1/chat/completions",
            "raw_path": b"",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"content-type", b"application/json")],
            "server": ("127.0.0.1", 1),
            "client": ("127.0.0.1", 2),
        }
        await asyncio.wait_for(app(scope, receive, send), timeout=10)
        assert held_during_stream == [1]
        return len(core.running) + len(core.waiting)

    assert asyncio.run(scenario()) == 0
