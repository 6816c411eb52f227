"""A real replay over loopback HTTP measures its own loop's receipt lag (issue 45, item 2), and its
latency figures carry it as their instrument error."""

from dataclasses import asdict
from pathlib import Path

import pytest

from pipeline.analysis.judge.figures_table import partition_figures
from pipeline.analysis.tabulate import tables
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from pipeline.tokens import count_message_tokens
from tests.support.specs import demo_spec_dict

MESSAGES = [{"role": "user", "content": "Why was my card declined at the shop today?"}]


def test_a_replay_measures_its_loops_receipt_lag(tmp_path: Path, zero_server):
    tokens = count_message_tokens(MESSAGES)
    # planned over 90 ms after a 50 ms lead: the 5 ms probe wakes many times before the last send
    plan = [PlannedRequest(f"q{i}", i * 0.01, MESSAGES, 4, tokens) for i in range(10)]
    with Journal(tmp_path / "journal.jsonl") as journal:
        stats = run_replay(plan, Target("ref", zero_server.base_url, "reference-model"), ReplaySettings(), "r", journal)
    assert stats.errors == 0
    assert stats.loop_lag_samples > 0
    assert stats.loop_lag_p99_ms is not None and stats.loop_lag_p99_ms >= 0

    # the figures made from this replay carry the error beside each latency figure (TPOT exempt)
    data = demo_spec_dict()
    data["workload"]["replay"] = {"mode": "trace", "warmup_s": 0, "cooldown_s": 0}
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["name"] = "ref"
    data["claim"]["figures"] = {"ttft_ms_p99": 1000.0}
    data.pop("accuracy", None)
    spec = Spec.model_validate(data)
    raw = journal_to_table(tmp_path / "journal.jsonl")
    rows = {name: table.to_pylist() for name, table in tables.analyse_all(raw, spec).items()}
    summary = {"candidates": {"ref": asdict(stats)}}
    figures = {f["metric"]: f for f in partition_figures(spec, rows, raw, replay_summary=summary)}
    ttft = figures["ttft_ms_p99"]
    assert ttft["instrument_error_ms"] >= stats.loop_lag_p99_ms  # the largest of the probe and the send lag
    assert ttft["instrument_error_ms"] == pytest.approx(figures["e2e_ms_p50"]["instrument_error_ms"])
    assert ttft["instrument_error_source"] in ("loop receipt lag", "send lag")
    assert "instrument_error_ms" not in figures["tpot_ms_p50"]
