"""What an engine says about itself, read from each server's recorded or source-shaped answer
(tests/fixtures/engine_facts/README.md): llama.cpp's /props, SGLang's /get_server_info, vLLM's
cache_config_info in /metrics. A server that says nothing, or says it badly, has no section and
the fingerprint stands; the section enters neither the version key nor fingerprint_sha256."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from pipeline.replay.endpoint import fingerprint as fp
from pipeline.replay.endpoint.engine_facts import cache_config_labels, engine_facts, server_root
from pipeline.replay.pacing.engine import Target

FIXTURES = Path(__file__).parents[1] / "fixtures"
ENGINE = FIXTURES / "engine_facts"
TARGET = Target("c", "http://127.0.0.1:9/v1", "m")


def _client(answers: dict[str, httpx.Response], seen: list[str] | None = None) -> httpx.Client:
    def handle(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(f"{request.method} {request.url.path}")
        return answers.get(request.url.path) or httpx.Response(404, json={"error": "not found"})

    return httpx.Client(transport=httpx.MockTransport(handle))


def _json(name: str) -> httpx.Response:
    return httpx.Response(200, json=json.loads((ENGINE / name).read_text()))


def test_llama_cpp_props_recorded_from_the_live_server():
    seen: list[str] = []
    facts = engine_facts(_client({"/props": _json("llama_server_props.json")}, seen), TARGET)
    assert facts == {
        "source": "llama.cpp /props",
        "server": "llama.cpp",
        "quantization": "Q4_K - Medium",
        "precision": "q4_k_m",
        "weight_bits": 4,
        "slots": 4,
        "context_per_slot": 2048,
        "kv_cache_dtype": None,
        "build": "b0-unknown",
    }
    assert seen == ["GET /props"]  # the first server that answers ends the reading; only GETs


def test_sglang_server_info():
    facts = engine_facts(_client({"/get_server_info": _json("sglang_get_server_info.json")}), TARGET)
    assert facts is not None
    assert (facts["source"], facts["quantization"], facts["precision"], facts["weight_bits"]) == (
        "sglang /get_server_info",
        "awq",
        "awq",
        4,
    )
    assert (facts["slots"], facts["context_length"], facts["kv_cache_dtype"], facts["build"]) == (
        64,
        32768,
        "auto",
        "0.5.2",
    )
    assert "internal_states" not in facts and "memory_usage" not in json.dumps(facts)


def test_sglang_dtype_auto_names_no_precision():
    info = json.loads((ENGINE / "sglang_get_server_info.json").read_text())
    info["quantization"], info["dtype"] = None, "auto"
    facts = engine_facts(_client({"/get_server_info": httpx.Response(200, json=info)}), TARGET)
    assert facts is not None and facts["precision"] is None and facts["weight_bits"] is None
    info["dtype"] = "bfloat16"
    facts = engine_facts(_client({"/get_server_info": httpx.Response(200, json=info)}), TARGET)
    assert facts is not None and (facts["precision"], facts["weight_bits"]) == ("bf16", 16)


def test_vllm_cache_config_info_with_the_models_entry():
    metrics = (ENGINE / "vllm_metrics.txt").read_text()
    entry = json.loads((FIXTURES / "models_lists" / "vllm.json").read_text())["data"][0]
    facts = engine_facts(_client({"/metrics": httpx.Response(200, text=metrics)}), TARGET, entry)
    assert facts is not None
    assert facts["source"] == "vllm /metrics cache_config_info" and facts["server"] == "vllm"
    assert facts["precision"] is None and facts["quantization"] is None  # vLLM's /metrics says nothing of weights
    assert (facts["kv_cache_dtype"], facts["block_size"], facts["kv_cache_blocks"]) == ("fp8", 16, 27465)
    assert facts["prefix_caching"] == "True" and facts["gpu_memory_utilization"] == 0.9
    assert facts["context_length"] == entry["max_model_len"]
    assert cache_config_labels("vllm:num_requests_running 0\n") is None


@pytest.mark.parametrize(
    "answers",
    [
        {},  # a hosted API: 404 everywhere
        {"/props": httpx.Response(200, text="<html>not json</html>")},
        {"/props": httpx.Response(200, json=["a", "list"])},
        {"/props": httpx.Response(200, json={"model_ftype": 12, "total_slots": "many"})},
        {"/get_server_info": httpx.Response(500, text="boom")},
        {"/metrics": httpx.Response(200, text="# the reference endpoint's families\nloadproof_requests 3\n")},
    ],
)
def test_a_server_that_says_nothing_or_says_it_badly(answers):
    facts = engine_facts(_client(answers), TARGET)
    assert facts is None or facts["precision"] is None  # never raised


def test_a_server_that_cannot_be_reached_has_no_section():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    assert engine_facts(httpx.Client(transport=httpx.MockTransport(refuse)), TARGET) is None


def test_the_server_root_drops_the_openai_prefix():
    assert server_root("http://h:8080/v1/") == server_root("http://h:8080") == "http://h:8080"


def test_the_engine_section_enters_neither_the_version_key_nor_the_fingerprint_hash(monkeypatch):
    answer = json.loads((FIXTURES / "models_lists" / "llama_server.json").read_text())
    model = answer["data"][0]["id"]

    def models_response(client, target):
        return httpx.Response(200, json=answer, request=httpx.Request("GET", target.base_url + "/models"))

    sections = iter([json.loads((ENGINE / "llama_server_props.json").read_text()), None])
    monkeypatch.setattr(fp, "models_response", models_response)
    monkeypatch.setattr(
        fp, "engine_facts", lambda client, target, entry: (props := next(sections)) and {"slots": props["total_slots"]}
    )
    one = fp.fingerprint(Target("c", "http://127.0.0.1:9/v1", model), with_probes=False)
    two = fp.fingerprint(Target("c", "http://127.0.0.1:9/v1", model), with_probes=False)
    assert one["engine"] == {"slots": 4} and two["engine"] is None  # the second read timed out, say
    assert fp.version_key(one) == fp.version_key(two) and one["fingerprint_sha256"] == two["fingerprint_sha256"]
