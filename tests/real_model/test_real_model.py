"""A real serving engine in the loop: llama.cpp's own server (`llama-server`, four slots batched
continuously) with Gemma 3 270M on loopback.

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
    pytest.mark.skipif(not llama_available(), reason="the `model` extra (llama-server, Gemma GGUF) is not installed"),
]


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    with LlamaServer() as server:
        yield server


def test_streams_replay_with_server_counted_tokens(tmp_path: Path, llama: LlamaServer) -> None:
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
        # llama-server streams usage (asked for) and a token a chunk; its own timings ride along
        assert row["usage_issue"] is None and row["usage_reported"] is True
        assert row["output_tokens_source"] == "usage" and 0 < row["content_chunks"] <= row["output_tokens"] <= 24
        assert row["server_predicted_n"] == row["output_tokens"] and row["server_prompt_ms"] > 0


@pytest.mark.slow
def test_whole_pipeline_on_a_small_slice(tmp_path: Path, write_spec, llama: LlamaServer, monkeypatch) -> None:
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "unused-by-llama")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    data = demo_spec_dict()
    data["candidates"] = data["candidates"][:1]  # one real model
    data["candidates"][0].update(base_url=llama.base_url, model=MODEL_ALIAS)
    data["workload"]["sample"].update(max_requests=20)
    # the model's own tokenizer fits the prompts
    data["workload"]["prompts"] = {"min_tokens": False, "tokenizer": f"gguf:{gemma_gguf()}"}
    # Gemma 3 270M does not reason: 16 tokens hold a label (the demo's 64 leave a reasoning model room)
    data["accuracy"].update(max_items=50, concurrency=4, request_timeout_s=120, max_tokens=16)
    # closed-loop at the server's four slots
    data["workload"]["replay"] = {
        "mode": "concurrency",
        "concurrency": 4,
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
    assert all(r["status"] == "ok" and r["usage_issue"] is None for r in raw), [
        (r["error_type"], r["error_message"], r["usage_issue"]) for r in raw if r["status"] != "ok" or r["usage_issue"]
    ]
    # usage in streams: each reply counted by the server, its own timings kept beside it
    assert {r["output_tokens_source"] for r in raw} == {"usage"}
    assert all(r["server_predicted_n"] == r["output_tokens"] for r in raw)
    pack = json.loads((out / "evidence_pack.json").read_text())
    measured = {f["metric"]: f for f in pack["figures"]}
    assert measured["ttft_ms_p50"]["n"] == 20 and measured["ttft_ms_p50"]["measured"] > 0
    assert measured["output_tokens_per_s"]["measured"] > 0
    assert measured["accuracy"]["n"] == 50  # 50 labelled items scored against the real model
