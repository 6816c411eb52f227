"""A replay in a process of its own, to be killed mid-way, and the journal lines it has written."""

from __future__ import annotations

from pathlib import Path

DRIVER = """
import sys
from pathlib import Path
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.records import PlannedRequest
from pipeline.replay.recording.journal import Journal
base_url, journal_path, run_id = sys.argv[1:4]
plan = [PlannedRequest(f"q{i}", i * 0.02, [{"role": "user", "content": "hello"}], 20, 2) for i in range(500)]
with Journal(Path(journal_path)) as journal:
    run_replay(plan, Target("ref", base_url, "reference-model"), ReplaySettings(mode="trace"), run_id, journal)
"""


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0
