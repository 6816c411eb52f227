"""The fingerprint's greedy probes ask llama.cpp's server not to reuse its prompt cache (a reply
computed from the cache differs from a cold one there), and send no such field to any other server."""

from __future__ import annotations

import json

import httpx

from pipeline.replay.endpoint.fingerprint import PROBES, probe
from pipeline.replay.pacing.engine import Target


def _probe_bodies(server: str | None) -> list[dict]:
    bodies: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"content": "ready"}}], "system_fingerprint": "b1"})

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        hashes, system_fingerprint = probe(client, Target("c", "http://127.0.0.1:9/v1", "m"), server)
    assert len(hashes) == len(PROBES) and len(set(hashes)) == 1 and system_fingerprint == "b1"
    return bodies


def test_llama_cpp_probes_skip_the_prompt_cache_and_others_get_no_extra_field():
    assert all(body["cache_prompt"] is False and body["temperature"] == 0 for body in _probe_bodies("llama.cpp"))
    for server in (None, "uvicorn", "vllm"):
        assert all("cache_prompt" not in body for body in _probe_bodies(server))


def test_the_probes_speak_the_candidates_api_and_read_its_reply():
    """chat, completions and responses: each probe to the API's path, its body in the API's names,
    the reply's answer text hashed (the same text on each API: the same hash)."""
    replies = {
        "/v1/chat/completions": {"choices": [{"message": {"content": "ready"}}]},
        "/v1/completions": {"choices": [{"text": "ready"}]},
        "/v1/responses": {
            "output": [
                {"type": "reasoning", "summary": []},
                {"type": "message", "content": [{"type": "output_text", "text": "ready"}]},
            ]
        },
    }
    seen: dict[str, list[dict]] = {}

    def answer(request: httpx.Request) -> httpx.Response:
        seen.setdefault(request.url.path, []).append(json.loads(request.content))
        return httpx.Response(200, json=replies[request.url.path])

    hashes = {}
    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        for api in ("chat", "completions", "responses"):
            hashes[api], _ = probe(client, Target("c", "http://127.0.0.1:9/v1", "m", api=api))
    assert hashes["chat"] == hashes["completions"] == hashes["responses"]
    assert {path: len(bodies) for path, bodies in seen.items()} == {path: len(PROBES) for path in replies}
    assert seen["/v1/completions"][0]["prompt"] == PROBES[0] and "messages" not in seen["/v1/completions"][0]
    responses = seen["/v1/responses"][0]
    assert responses["input"] == [{"role": "user", "content": PROBES[0]}] and responses["max_output_tokens"] == 16
    assert all(body["temperature"] == 0 and body["stream"] is False for bodies in seen.values() for body in bodies)
