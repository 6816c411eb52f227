"""A real model in the loop: llama.cpp's OpenAI-compatible server with Gemma 3 270M on loopback.

Needs the `model` extra (`make real-model`); skipped cleanly without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference.llama_server import MODEL_ALIAS, LlamaServer, gemma_gguf, llama_available
from pipeline.replay.engine import ReplaySettings, Target, run_replay
from pipeline.replay.journal import Journal, journal_to_table
from pipeline.replay.records import PlannedRequest
from pipeline.tokens import count_message_tokens
from tests.support.specs import demo_spec_dict

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(not llama_available(), reason="the `model` extra (llama_cpp, Gemma GGUF) is not installed"),
]


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    with LlamaServer() as server:
        yield server


def test_streams_replay_with_client_counted_tokens(tmp_path: Path, llama: LlamaServer) -> None:
    messages = [{"role": "user", "content": "In one sentence: why might a card payment be declined?"}]
    plan = [PlannedRequest(f"q{i}", i * 0.05, messages, 24, count_message_tokens(messages)) for i in range(3)]
    with Journal(tmp_path / "journal.jsonl") as journal:
        stats = run_replay(
            plan,
            Target("llama", llama.base_url, MODEL_ALIAS),
            ReplaySettings(mode="trace", request_timeout_s=120),
            "run-llama",
            journal,
        )
    rows = journal_to_table(tmp_path / "journal.jsonl").to_pylist()
    assert stats.errors == 0, [r["error_message"] for r in rows]
    for row in rows:
        assert row["status"] == "ok" and row["ttft_ms"] > 0 and row["e2e_ms"] >= row["ttft_ms"]
        # llama.cpp sends no usage in streams: flagged, and (the plan naming no real tokenizer) the
        # content chunks stand in, a token each from llama.cpp
        assert row["usage_issue"] == "usage_missing" and row["usage_reported"] is False
        assert 0 < row["output_tokens"] == row["content_chunks"] and row["output_tokens_source"] == "chunks"
        assert row["content_chunks"] >= 1


@pytest.mark.slow
def test_whole_pipeline_on_a_small_slice(tmp_path: Path, write_spec, llama: LlamaServer, monkeypatch) -> None:
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "unused-by-llama")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    data = demo_spec_dict()
    data["candidates"] = data["candidates"][:1]  # one real model
    data["candidates"][0].update(base_url=llama.base_url, model=MODEL_ALIAS)
    data["workload"]["sample"].update(max_requests=20)
    # llama.cpp has no min_tokens/ignore_eos; the model's own tokenizer counts what the server does not
    data["workload"]["prompts"] = {"min_tokens": False, "tokenizer": f"gguf:{gemma_gguf()}"}
    # Gemma 3 270M does not reason: 16 tokens hold a label (the demo's 64 leave a reasoning model room)
    data["accuracy"].update(max_items=50, concurrency=1, request_timeout_s=120, max_tokens=16)
    # one request at a time is all llama.cpp serves: replay closed-loop at concurrency 1
    data["workload"]["replay"] = {
        "mode": "concurrency",
        "concurrency": 1,
        "warmup_s": 0,
        "cooldown_s": 0,
        "request_timeout_s": 120,
        "max_duration_s": 900,
    }
    out = tmp_path / "pack"
    result = CliRunner().invoke(app, ["run", str(write_spec(data)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    raw = pq.read_table(out / "data" / "raw_timings.parquet").to_pylist()
    assert len(raw) == 20
    assert all(r["status"] == "ok" and r["usage_issue"] == "usage_missing" for r in raw), [
        (r["error_type"], r["error_message"]) for r in raw if r["status"] != "ok"
    ]
    # no usage in streams: each reply counted with the GGUF's tokenizer, and the blocking output ≤
    # max_tokens check (which the approximate count once failed: 50 tokens counted as 52) passed
    assert {r["output_tokens_source"] for r in raw} == {"tokenizer:gguf:gemma-3-270m-q4_k_m.gguf"}
    pack = json.loads((out / "evidence_pack.json").read_text())
    measured = {f["metric"]: f for f in pack["figures"]}
    assert measured["ttft_ms_p50"]["n"] == 20 and measured["ttft_ms_p50"]["measured"] > 0
    assert measured["output_tokens_per_s"]["measured"] > 0
    assert measured["accuracy"]["n"] == 50  # 50 labelled items scored against the real model
