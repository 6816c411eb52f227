"""Synthetic prompts fitted to logged lengths (checked against the server's usage), and the
claim-divergence verdict."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.plan.replay_plan import build_plan, planned_requests, prompt_fit_summary
from pipeline.plan.synthetic_prompts import ApproxTokenizer, fit_messages
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.spec import Spec
from pipeline.spec.workload import Prompts, Replay
from pipeline.workload.divergence import GOOD_ENOUGH, RE_MEASURE, claim_divergence
from tests.support.canonical_logs import canonical_table
from tests.support.specs import demo_spec_dict


@pytest.mark.parametrize("target", [1, 2, 7, 100, 513, 2048])
def test_synthetic_prompt_hits_the_logged_length_exactly(target: int):
    messages, achieved = fit_messages(target, "seed", ApproxTokenizer(), prefix_hashes=[1, 2], block_tokens=64)
    assert achieved == target == ApproxTokenizer().count_messages(messages)


def test_shared_hash_ids_give_shared_prompt_prefixes():
    a, _ = fit_messages(300, "a", ApproxTokenizer(), prefix_hashes=[7, 8], block_tokens=100)
    b, _ = fit_messages(300, "b", ApproxTokenizer(), prefix_hashes=[7, 9], block_tokens=100)
    shared = os.path.commonprefix([a[0]["content"], b[0]["content"]])
    assert ApproxTokenizer().count_messages([{"role": "user", "content": shared}]) >= 100
    assert a[0]["content"] != b[0]["content"]


def test_plan_records_requested_and_achieved_lengths_and_server_usage_agrees(tmp_path: Path, zero_server):
    sample = canonical_table(
        [0.0, 0.01, 0.02], prompt_tokens=[5, 300, 1200], output_tokens=[3, 4, 5], prefix_hashes=[[1], [1, 2], None]
    )
    sample = sample.append_column("window_offset_s", pa.array([0.0, 0.01, 0.02]))
    plan = build_plan(sample, Replay(), Prompts(min_tokens=True))
    rows = plan.to_pylist()
    assert [r["prompt_source"] for r in rows] == ["synthetic"] * 3
    assert [r["prompt_tokens_client"] for r in rows] == [5, 300, 1200]
    assert all(r["prompt_tokens_error"] == 0 and r["tokenizer"] == "loadproof-approx" for r in rows)
    assert [r["min_tokens"] for r in rows] == [3, 4, 5]
    assert prompt_fit_summary(plan) == {"synthetic": {"requests": 3, "exact": 3, "within_1pct": 3, "max_abs_error": 0}}
    with Journal(tmp_path / "journal.jsonl") as journal:
        run_replay(
            planned_requests(plan),
            Target("ref", zero_server.base_url, "reference-model"),
            ReplaySettings(),
            "run",
            journal,
        )
    timings = {r["request_id"]: r for r in journal_to_table(journal.path).to_pylist()}
    for row in rows:
        assert timings[row["request_id"]]["prompt_tokens"] == row["prompt_tokens_logged"]  # the server's usage
        assert timings[row["request_id"]]["output_tokens"] == row["max_tokens"]


def test_logged_text_is_replayed_as_it_is():
    text = [{"role": "user", "content": "my card was declined"}]
    sample = canonical_table([0.0], prompt_tokens=[9], messages_json=[json.dumps(text)])
    sample = sample.append_column("window_offset_s", pa.array([0.0]))
    row = build_plan(sample, Replay(mode="concurrency", concurrency=2)).to_pylist()[0]
    assert json.loads(row["messages_json"]) == text and row["prompt_source"] == "logged"
    assert row["scheduled_offset_s"] is None
    assert row["prompt_tokens_client"] == 5 and row["prompt_tokens_error"] == 5 - 9


def _profile(**overrides) -> dict:
    profile = {
        "requests": 1000,
        "prompt_tokens_p50": 1000.0,
        "prompt_tokens_p99": 2000.0,
        "output_tokens_p50": 120.0,
        "output_tokens_p99": 300.0,
        "concurrency_littles_law": 50.0,
        "concurrency_peak_logged": 70,
        "arrival_rate_per_s": 10.0,
        "interarrival_cv": 1.0,
        "peak_to_mean_ratio": 1.5,
        "dispersion": [{"bin_s": 1.0, "index_of_dispersion": 1.1}],
        "share_multi_turn": 0.0,
        "share_system_prompted": 0.0,
        "share_structured_output": 0.0,
        "share_long_context": 0.0,
        "prefix_block_reuse_share": 0.0,
    }
    return {**profile, **overrides}


def _spec(**workload) -> Spec:
    data = demo_spec_dict()
    data["workload"].update(workload)
    return Spec.model_validate(data)


def test_claim_measured_under_production_conditions_is_a_good_enough_proxy():
    result = claim_divergence(_spec(production={"precision": "FP8"}), _profile())
    verdict = result["proxy_verdict"]
    assert verdict["verdict"] == GOOD_ENOUGH
    status = {a["axis"]: a["status"] for a in result["axes"]}
    assert status["input tokens"] == status["output tokens"] == status["concurrency / batch size"] == "matches"
    assert status["precision"] == "matches" and status["latency budget"] == "matches"
    assert any("dataset" in reason for reason in verdict["reasons"])  # reported, not decisive


@pytest.mark.parametrize(
    ("overrides", "workload", "axis"),
    [
        ({"prompt_tokens_p50": 55.0, "prompt_tokens_p99": 600.0}, {}, "input tokens"),
        ({"prompt_tokens_p99": 9000.0}, {}, "input tokens"),
        ({"concurrency_littles_law": 3.0}, {}, "concurrency / batch size"),
        ({"concurrency_littles_law": None}, {}, "concurrency / batch size"),
        ({}, {"production": {"precision": "bf16"}}, "precision"),
    ],
)
def test_one_diverging_decisive_axis_means_re_measure(overrides, workload, axis):
    result = claim_divergence(_spec(**workload), _profile(**overrides))
    assert result["proxy_verdict"]["verdict"] == RE_MEASURE
    assert result["proxy_verdict"]["reasons"][0].startswith(axis)


def test_bursty_arrivals_and_structure_are_reported_but_do_not_decide():
    profile = _profile(peak_to_mean_ratio=6.0, share_long_context=0.3, prefix_block_reuse_share=0.6)
    result = claim_divergence(_spec(production={"precision": "fp8"}), profile)
    assert result["proxy_verdict"]["verdict"] == GOOD_ENOUGH
    reasons = " ".join(result["proxy_verdict"]["reasons"])
    assert "bursty" in reasons and "long context 30%" in reasons


def test_stratified_sample_needs_a_closed_loop_replay():
    data = demo_spec_dict()
    data["workload"]["sample"] = {"mode": "stratified", "max_requests": 10}
    with pytest.raises(ValueError, match="stratified sample keeps no arrival process"):
        Spec.model_validate(data)
    data["workload"]["replay"] = {"mode": "concurrency", "concurrency": 4}
    assert Spec.model_validate(data).workload.sample.mode == "stratified"


# A run of its own, not the shared demo pack (tests/e2e/conftest.py): its input is a length-only
# Azure CSV trace (synthetic prompts), not the demo's logged text.
@pytest.mark.slow
def test_length_only_azure_trace_runs_end_to_end_with_synthetic_prompts(
    tmp_path: Path, write_spec, zero_server, monkeypatch
):
    """An Azure-format trace (lengths, no text): ingest → sample → profile → plan with fitted
    prompts → replay; the server's usage equals the logged prompt lengths; the pack has a verdict."""
    from typer.testing import CliRunner

    from pipeline.cli import app

    log = tmp_path / "trace.csv"
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    lines += [f"2023-11-16 18:15:{10 + i * 0.25:010.7f},{40 + 37 * i % 300},{3 + i % 5}" for i in range(24)]
    log.write_text("\n".join(lines))
    data = demo_spec_dict()
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["base_url"] = zero_server.base_url
    data["workload"] = {
        "log": {"path": str(log), "format": "azure_csv"},
        "sample": {"mode": "busiest_window", "window_s": 4},
        "replay": {"mode": "trace", "max_duration_s": 30},
        "production": {"precision": "bf16"},
    }
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "sk-test-never-written")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "pack"
    result = CliRunner().invoke(app, ["run", str(write_spec(data)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    plan = pq.read_table(out / "data" / "replay_plan.parquet").to_pylist()
    assert plan and all(r["prompt_source"] == "synthetic" and r["prompt_tokens_error"] == 0 for r in plan)
    timings = {r["request_id"]: r for r in pq.read_table(out / "data" / "raw_timings.parquet").to_pylist()}
    assert all(timings[r["request_id"]]["prompt_tokens"] == r["prompt_tokens_logged"] for r in plan)
    pack = json.loads((out / "evidence_pack.json").read_text())
    assert pack["proxy_verdict"]["verdict"] == RE_MEASURE
    assert any(r.startswith("precision: claimed fp8, production bf16") for r in pack["proxy_verdict"]["reasons"])
    assert "good-enough proxy?" in (out / "evidence_pack.md").read_text()
