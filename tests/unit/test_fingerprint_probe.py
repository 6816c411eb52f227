"""The fingerprint's greedy probes ask llama.cpp's server not to reuse its prompt cache (a reply
computed from the cache differs from a cold one there), and send no such field to any other server."""

from __future__ import annotations

import json

import httpx

from pipeline.replay.engine import Target
from pipeline.replay.fingerprint import PROBES, probe


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
