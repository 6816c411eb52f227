"""The reference endpoint's own view over real HTTP on loopback: `cached_tokens` in usage for a
repeated prefix (streamed and whole), and a `/metrics` scrape equal to the engine's state at the
instant it was taken."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import uvicorn
import yaml
from prometheus_client.parser import text_string_to_metric_families

from pipeline.reference import ReferenceServer, ServingProfile, build_app
from pipeline.reference.managed_server import free_port
from pipeline.tokens import count_message_tokens

MODEL = "reference-model"
HISTORY = " ".join(f"turn {i}: the customer asks about card {i % 7} and the branch replies." for i in range(30))


def _profile_file(tmp_path: Path, **overrides: object) -> str:
    fields = {
        "name": "view",
        "prefill_ms_per_token": 0.01,
        "decode_ms_per_token": 0.5,
        "decode_slowdown_per_seq": 0.0,
        "max_running_seqs": 4,
        "kv_cache_tokens": 20000,
        **overrides,
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(fields))
    return str(path)


def _messages(question: str) -> list[dict]:
    return [{"role": "system", "content": HISTORY}, {"role": "user", "content": question}]


def _streamed_usage(client: httpx.Client, messages: list[dict]) -> dict:
    body = {"model": MODEL, "messages": messages, "stream": True, "max_tokens": 3}
    body["stream_options"] = {"include_usage": True}
    with client.stream("POST", "/chat/completions", json=body) as response:
        events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    return json.loads(events[-2])["usage"]


def test_cached_tokens_reported_for_a_repeated_prefix(tmp_path: Path) -> None:
    first, second = _messages("Where is my refund?"), _messages("And my new card?")
    shared_blocks = count_message_tokens(first[:1]) // 16  # the system message, in 16-token blocks
    with ReferenceServer(_profile_file(tmp_path)) as server, httpx.Client(base_url=server.base_url) as client:
        whole = client.post("/chat/completions", json={"model": MODEL, "messages": first, "max_tokens": 3}).json()
        assert whole["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}  # a cold cache
        usage = _streamed_usage(client, second)
        assert usage["prompt_tokens"] == count_message_tokens(second)
        assert usage["prompt_tokens_details"]["cached_tokens"] == shared_blocks * 16
        again = client.post("/chat/completions", json={"model": MODEL, "messages": second, "max_tokens": 3}).json()
        cached = again["usage"]["prompt_tokens_details"]["cached_tokens"]
        assert cached == (count_message_tokens(second) - 1) // 16 * 16  # all but the last token's block
        scrape = httpx.get(f"{server.root_url}/metrics")
    assert scrape.headers["content-type"].startswith("text/plain")
    values = _values(scrape.text)
    assert values["vllm:prefix_cache_hits_total"] == shared_blocks * 16 + cached
    assert values["vllm:request_success_total"] == 3


def test_no_cached_tokens_when_the_prefix_cache_is_off(tmp_path: Path) -> None:
    with ReferenceServer(_profile_file(tmp_path, prefix_cache=False)) as server:
        with httpx.Client(base_url=server.base_url) as client:
            for _ in range(2):
                body = client.post(
                    "/chat/completions", json={"model": MODEL, "messages": _messages("Hi"), "max_tokens": 2}
                )
                assert "prompt_tokens_details" not in body.json()["usage"]


def _values(text: str) -> dict[str, float]:
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.name.endswith("_bucket")
    }


def test_scraped_metrics_equal_the_engine_state_at_that_instant() -> None:
    """A first engine step that lasts ~an hour (prefill at 1 s a token) holds the engine still:
    the first request is running (its prompt in KV), the other four arrived during the step and
    wait. A scrape over HTTP then reads exactly the engine's state, read in the same event loop.
    (The held handlers are left to `asyncio.run`, which cancels them as it closes the loop.)"""
    profile = ServingProfile(
        name="held",
        prefill_ms_per_token=1000.0,
        decode_ms_per_token=1.0,
        decode_slowdown_per_seq=0.0,
        max_running_seqs=2,
        kv_cache_tokens=4000,
    )
    app = build_app(profile)
    engine = app.state.engine
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    async def scenario() -> tuple[dict[str, float], tuple[int, int, float], int]:
        serving = asyncio.create_task(server.serve())
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            while not server.started:  # poll until it answers, no sleeping
                await asyncio.sleep(0)
            assert (await client.get("/health")).status_code == 200
            messages = [{"role": "user", "content": HISTORY}]
            requests = [
                asyncio.create_task(
                    client.post("/v1/chat/completions", json={"model": MODEL, "messages": messages, "max_tokens": 2})
                )
                for _ in range(5)
            ]
            while True:  # poll the scrape until all five are inside the engine
                values = _values((await client.get("/metrics")).text)
                if values["vllm:num_requests_running"] + values["vllm:num_requests_waiting"] == 5:
                    break
            core = engine.core
            state = (len(core.running), len(core.waiting) + engine.pending, core.kv_used / 4000)
            for request in requests:
                request.cancel()
            await asyncio.gather(*requests, return_exceptions=True)
        server.should_exit = server.force_exit = True  # no waiting for the held handlers
        await serving
        return values, state, count_message_tokens(messages)

    values, (running, waiting, kv_use), prompt = asyncio.run(scenario())
    assert values["vllm:num_requests_running"] == running == 1
    assert values["vllm:num_requests_waiting"] == waiting == 4
    assert values["vllm:kv_cache_usage_perc"] == values["vllm:gpu_cache_usage_perc"] == kv_use == prompt / 4000
    assert values["vllm:num_preemptions_total"] == 0
