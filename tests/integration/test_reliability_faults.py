"""Every fault class of the reference endpoint, mixed with good traffic in ONE replay run.

The endpoint draws each request's fault from its profile's seeded rates (in arrival order), and
its timeline says which request got which; the replay must record every planned request, each
with the error type (or usage issue) of its fault, and the good requests exactly as a clean run
records them (status, token counts, chunks — counts, not latencies).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from pipeline.reference import ReferenceServer
from pipeline.reference.timeline import read_timeline
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens
from tests.support.faults import EXPECTED

pytestmark = pytest.mark.slow

N_REQUESTS = 120
FAULT_RATE = 0.05  # each of the nine classes: 45 % faults, 55 % good traffic
SEED = 11  # a seed whose draws include every class in N_REQUESTS
CLIENT_TIMEOUT_S = 0.5  # a stall (5 s of silence) runs past it
COMPARED = (
    "status",
    "error_type",
    "usage_issue",
    "http_status",
    "prompt_tokens",
    "output_tokens",
    "output_tokens_client",
    "content_chunks",
    "prompt_tokens_client",
    "max_tokens",
)


def _plan() -> list[PlannedRequest]:
    plan = []
    for i in range(N_REQUESTS):
        messages = [{"role": "user", "content": f"Request {i}: is transfer {i * 7} to Spain still pending?"}]
        plan.append(PlannedRequest(f"q{i:03d}", None, messages, 4 + i % 9, count_message_tokens(messages)))
    return plan


def _profile(folder: Path, rates: dict[str, float]) -> str:
    path = folder / "mixed.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "mixed",
                "prefill_ms_per_token": 0,
                "decode_ms_per_token": 0,
                "decode_slowdown_per_seq": 0,
                "max_running_seqs": 1000,
                "seed": SEED,
                "faults": {"rates": rates, "stall_s": 5.0},
            }
        )
    )
    return str(path)


def _run(folder: Path, rates: dict[str, float]) -> tuple[dict[str, dict], dict[str, str | None]]:
    folder.mkdir()
    timeline = folder / "timeline.jsonl"
    with (
        ReferenceServer(_profile(folder, rates), timeline_path=timeline) as server,
        Journal(folder / "journal.jsonl") as journal,
    ):
        settings = ReplaySettings(mode="concurrency", concurrency=8, request_timeout_s=CLIENT_TIMEOUT_S)
        stats = run_replay(_plan(), Target("ref", server.base_url, "reference-model"), settings, "run-mixed", journal)
    assert stats.sent == N_REQUESTS and stats.unsent == 0
    rows = journal_to_table(folder / "journal.jsonl").to_pylist()
    faults = {record["request_id"]: record["fault"] for record in read_timeline(timeline)}
    return {row["request_id"]: row for row in rows}, faults


def test_every_fault_class_mixed_with_good_traffic_in_one_run(tmp_path: Path) -> None:
    mixed, faults = _run(tmp_path / "mixed", dict.fromkeys(EXPECTED, FAULT_RATE))
    clean, clean_faults = _run(tmp_path / "clean", {})
    planned = {item.request_id for item in _plan()}

    # every planned request is in the raw timings, once; the server saw each one once
    assert set(mixed) == planned == set(faults) and len(mixed) == N_REQUESTS
    assert set(clean) == planned and set(clean_faults.values()) == {None}
    drawn = Counter(faults.values())
    assert set(drawn) == set(EXPECTED) | {None}, f"seed {SEED} must draw every class: {drawn}"
    assert drawn[None] >= N_REQUESTS // 3

    for request_id, row in mixed.items():
        fault = faults[request_id]
        if fault is None:  # good traffic: recorded exactly as in a clean run
            assert {k: row[k] for k in COMPARED} == {k: clean[request_id][k] for k in COMPARED}
            assert row["status"] == "ok" and row["error_type"] is None and row["usage_issue"] is None
            assert row["ttft_ms"] is not None and row["e2e_ms"] is not None
            assert row["output_tokens"] == row["max_tokens"] == row["output_tokens_client"]
            continue
        status, error_type, usage_issue = EXPECTED[fault]
        assert (row["status"], row["error_type"], row["usage_issue"]) == (status, error_type, usage_issue), (
            request_id,
            fault,
        )
        if status == "ok":  # usage faults: the client's own count is still the truth
            assert row["output_tokens_client"] == row["max_tokens"] and row["ttft_ms"] is not None
        else:
            assert row["ttft_ms"] is None and row["e2e_ms"] is None

    # the good requests' figures: same count, same tokens as the clean run's
    good = [rid for rid, fault in faults.items() if fault is None]
    assert sum(mixed[rid]["output_tokens"] for rid in good) == sum(clean[rid]["output_tokens"] for rid in good)
