"""A replay killed with SIGKILL leaves every request it finished recoverable from its journal."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.reference import ReferenceServer
from pipeline.replay.recording.journal import journal_to_table
from tests.support.replay_driver import DRIVER, count_lines

pytestmark = pytest.mark.slow

POLL_S = 0.05
MAX_WAIT_S = 60


def test_sigkill_mid_replay_loses_no_finished_request(tmp_path: Path):
    journal = tmp_path / "run-killed.jsonl"
    with ReferenceServer("demo") as server:
        driver = subprocess.Popen([sys.executable, "-c", DRIVER, server.base_url, str(journal), "run-killed"])
        deadline = time.monotonic() + MAX_WAIT_S
        while count_lines(journal) < 20:
            assert driver.poll() is None and time.monotonic() < deadline
            time.sleep(POLL_S)  # polling the journal, not waiting for a server
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    assert driver.returncode == -signal.SIGKILL
    complete_lines = count_lines(journal)
    recovered = journal_to_table(journal)
    assert recovered.num_rows == complete_lines >= 20  # a torn last line, if any, is the only loss
    assert recovered.num_rows < 500  # it really was killed mid-way
    rows = recovered.to_pylist()
    assert {row["run_id"] for row in rows} == {"run-killed"}
    assert all(row["status"] == "ok" and row["e2e_ms"] > 0 for row in rows)
    assert len({row["request_id"] for row in rows}) == len(rows)
    json.loads(journal.read_text().splitlines()[0])  # plain JSON lines: readable without loadproof
