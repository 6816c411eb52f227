"""A real replay over loopback HTTP measures its own loop's receipt lag (issue 45, item 2)."""

from pathlib import Path

from pipeline.replay.engine import ReplaySettings, Target, run_replay
from pipeline.replay.journal import Journal
from pipeline.replay.records import PlannedRequest
from pipeline.tokens import count_message_tokens

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
