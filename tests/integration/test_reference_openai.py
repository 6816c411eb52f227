"""OpenAI compatibility of the reference endpoint beyond chat: text completions, Responses, models
and their changeable version, errors in OpenAI's shape, temperature and seed."""

from __future__ import annotations

import json

import httpx
import pytest
from httpx_sse import connect_sse

from pipeline.reference import ReferenceServer
from pipeline.tokens import count_tokens

MODEL = "reference-model"
MESSAGES = [{"role": "user", "content": "Summarise my last three card payments."}]


def _error(response: httpx.Response) -> dict:
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def test_text_completion_whole(client: httpx.Client) -> None:
    body = client.post("/completions", json={"model": MODEL, "prompt": "Dear customer,", "max_tokens": 7}).json()
    assert body["object"] == "text_completion" and body["id"].startswith("cmpl-")
    [choice] = body["choices"]
    assert choice["finish_reason"] == "length" and count_tokens(choice["text"]) == 7
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 7, "total_tokens": 10}


def test_a_response_not_streamed_is_one_response_object_with_the_chat_replys_words(client: httpx.Client) -> None:
    chat = client.post("/chat/completions", json={"model": MODEL, "messages": MESSAGES, "max_tokens": 7}).json()
    body = client.post("/responses", json={"model": MODEL, "input": MESSAGES, "max_output_tokens": 7}).json()
    assert body["object"] == "response" and body["id"].startswith("resp-")
    assert (body["status"], body["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})
    [message] = body["output"]
    assert message["type"] == "message" and message["content"][0]["type"] == "output_text"
    assert message["content"][0]["text"] == chat["choices"][0]["message"]["content"]  # one reply per request
    usage = chat["usage"]
    assert body["usage"] == {
        "input_tokens": usage["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage["total_tokens"],
    }
    text_input = client.post("/responses", json={"model": MODEL, "input": MESSAGES[0]["content"]}).json()
    assert text_input["status"] in ("completed", "incomplete") and text_input["usage"]["input_tokens"] > 0


@pytest.mark.parametrize(
    "body, param",
    [
        ({"model": MODEL, "input": []}, "input"),
        ({"model": MODEL, "input": MESSAGES, "max_output_tokens": -1}, "max_output_tokens"),
    ],
)
def test_a_response_request_the_endpoint_cannot_serve_is_a_400(client: httpx.Client, body: dict, param: str) -> None:
    response = client.post("/responses", json=body)
    assert response.status_code == 400 and _error(response)["param"] == param


def test_text_completion_streamed_with_usage_and_stop(client: httpx.Client) -> None:
    whole = client.post("/completions", json={"model": MODEL, "prompt": ["Dear customer,"], "max_tokens": 10}).json()
    words = whole["choices"][0]["text"].split(" ")
    stop = " " + words[4]
    request = {
        "model": MODEL,
        "prompt": "Dear customer,",
        "max_tokens": 10,
        "stop": stop,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    events = []
    with connect_sse(client, "POST", "/completions", json=request) as source:
        for sse in source.iter_sse():
            events.append(sse.data if sse.data == "[DONE]" else json.loads(sse.data))
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert all(c["object"] == "text_completion" for c in chunks)
    text = "".join(c["choices"][0]["text"] for c in chunks if c["choices"])
    assert text == whole["choices"][0]["text"][: whole["choices"][0]["text"].find(stop)]
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["usage"]["completion_tokens"] == count_tokens(text) == 4


def test_models_version_changes_at_runtime(server: ReferenceServer, client: httpx.Client) -> None:
    assert client.get(f"/models/{MODEL}").json()["version"] == "2026-11-01"
    response = httpx.post(f"{server.root_url}/admin/version", json={"version": "2026-12-24"})
    assert response.status_code == 200 and response.json()["version"] == "2026-12-24"
    [card] = client.get("/models").json()["data"]
    assert card["version"] == "2026-12-24" and card["created"] > 0
    assert _error(httpx.post(f"{server.root_url}/admin/version", json={"v": 1}))["param"] == "version"
    httpx.post(f"{server.root_url}/admin/version", json={"version": "2026-11-01"})


def test_unknown_model_card_and_unknown_route_are_openai_errors(client: httpx.Client) -> None:
    response = client.get("/models/gpt-nope")
    assert response.status_code == 404 and _error(response)["code"] == "model_not_found"
    response = client.get("/nothing-here")
    assert response.status_code == 404 and _error(response)["code"] == "not_found"
    response = client.get("/chat/completions")
    assert response.status_code == 405 and _error(response)["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    "body, param",
    [
        ({"model": MODEL, "messages": MESSAGES, "n": 2}, "n"),
        ({"model": MODEL, "messages": MESSAGES, "temperature": 3}, "temperature"),
        ({"model": MODEL, "prompt": ["a", "b"]}, "prompt"),
    ],
)
def test_unsupported_values_are_400s_naming_the_param(client: httpx.Client, body: dict, param: str) -> None:
    path = "/completions" if "prompt" in body else "/chat/completions"
    response = client.post(path, json=body)
    assert response.status_code == 400 and _error(response)["param"] == param


def test_temperature_and_seed_change_the_words_deterministically(client: httpx.Client) -> None:
    def text(**extra: object) -> str:
        body = client.post(
            "/chat/completions", json={"model": MODEL, "messages": MESSAGES, "max_tokens": 12, **extra}
        ).json()
        return body["choices"][0]["message"]["content"]

    assert text() == text(temperature=0)
    assert text(temperature=0.9) == text(temperature=0.9) != text()
    assert text(temperature=0.9, seed=1) != text(temperature=0.9, seed=2)


def test_prompt_longer_than_the_kv_cache_is_context_length_exceeded() -> None:
    with ReferenceServer("small-gpu") as small, httpx.Client(timeout=10) as http:
        response = http.post(
            f"{small.base_url}/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": "word " * 20_000}], "max_tokens": 4},
        )
        assert response.status_code == 400 and _error(response)["code"] == "context_length_exceeded"
        ok = http.post(
            f"{small.base_url}/chat/completions", json={"model": MODEL, "messages": MESSAGES, "max_tokens": 3}
        )
        assert ok.status_code == 200 and ok.headers["x-reference-profile"] == "small-gpu"
