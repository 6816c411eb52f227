"""SIGKILL at several seeded points, and secrets: nothing finished is lost, nothing leaks.

- The replay engine in a subprocess, killed after a (seeded) random number of finished requests,
  three times: every finished request is in its journal, readable as raw timings.
- The whole CLI run (`loadproof run`), with an API key set, killed mid-replay; then run again
  into the same pack folder: the new raw timings hold only the new run's rows (one per planned
  request), the killed run's journal is still recoverable, and the key appears in no file of
  the pack folder (Parquet, journals, Dagster's event log under .dagster, the pack) nor in the
  CLI's stdout/stderr of either run.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.reference import ReferenceServer
from pipeline.replay.recording.journal import journal_to_table
from tests.support.replay_driver import DRIVER, count_lines
from tests.support.specs import small_spec

pytestmark = pytest.mark.slow

KILL_SEED = 9
POLL_S = 0.02  # polling a journal's length, not waiting for a server
MAX_WAIT_S = 120
API_KEY = "sk-loadproof-reliability-5f3c9a1e7b"
LOADPROOF = Path(sys.executable).with_name("loadproof")


def _kill_when(process: subprocess.Popen, ready) -> None:
    deadline = time.monotonic() + MAX_WAIT_S
    while not ready():
        assert process.poll() is None, "finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(POLL_S)
    os.killpg(process.pid, signal.SIGKILL)  # its own session: the process and anything it started
    process.wait()
    assert process.returncode == -signal.SIGKILL


def test_engine_killed_at_several_seeded_points_keeps_every_finished_request(tmp_path: Path) -> None:
    kill_after = sorted(random.Random(KILL_SEED).sample(range(5, 200), 3))
    with ReferenceServer("zero") as server:  # no random faults: every finished row is ok
        for point in kill_after:
            run_id = f"run-kill-{point}"
            journal = tmp_path / f"{run_id}.jsonl"
            driver = subprocess.Popen(
                [sys.executable, "-c", DRIVER, server.base_url, str(journal), run_id], start_new_session=True
            )
            _kill_when(driver, lambda journal=journal, point=point: count_lines(journal) >= point)
            complete = count_lines(journal)
            rows = journal_to_table(journal).to_pylist()
            assert len(rows) == complete and point <= complete < 500, (point, complete)
            assert {row["run_id"] for row in rows} == {run_id}
            assert all(row["status"] == "ok" and row["e2e_ms"] > 0 for row in rows)
            assert len({row["request_id"] for row in rows}) == complete
            # requests go out in plan order (20 ms apart): what finished is a prefix, give or take in-flight ones
            assert max(int(row["request_id"][1:]) for row in rows) < complete + 50


def _cli(spec: Path, out: Path, env: dict, logs: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(LOADPROOF), "run", str(spec), "--out", str(out)],
        env=env,
        start_new_session=True,
        stdout=(logs.with_suffix(".stdout")).open("wb"),
        stderr=(logs.with_suffix(".stderr")).open("wb"),
    )


def _replay_journals(out: Path) -> list[Path]:
    """The replay's journals: in the candidate × version partition's folder."""
    return [path for path in out.glob("candidates/*/*/journal/*.jsonl") if not path.name.endswith("-calibration.jsonl")]


# A run of its own, not the shared demo pack (tests/e2e/conftest.py): the run is killed mid-replay
# and re-run into the same folder, which a shared pack must never be.
def test_cli_killed_mid_replay_then_rerun_is_clean_and_leaks_no_key(tmp_path: Path, write_spec, zero_server) -> None:
    assert LOADPROOF.exists()
    env = {**os.environ, "LOADPROOF_DEMO_API_KEY": API_KEY}
    env.pop("DAGSTER_HOME", None)
    spec, out = small_spec(write_spec, zero_server.base_url), tmp_path / "pack"

    killed = _cli(spec, out, env, tmp_path / "killed")
    _kill_when(killed, lambda: any(count_lines(path) >= 10 for path in _replay_journals(out)))
    assert not (out / "evidence_pack.json").exists()
    [killed_journal] = _replay_journals(out)
    killed_rows = journal_to_table(killed_journal).to_pylist()
    assert len(killed_rows) >= 10 and len({row["run_id"] for row in killed_rows}) == 1
    killed_run_id = killed_rows[0]["run_id"]

    rerun = _cli(spec, out, env, tmp_path / "rerun")
    assert rerun.wait(timeout=300) == 0, (tmp_path / "rerun.stderr").read_text()[-3000:]
    timings = pq.read_table(out / "data" / "raw_timings.parquet")
    plan = pq.read_table(out / "data" / "replay_plan.parquet")
    run_ids = set(timings.column("run_id").to_pylist())
    assert len(run_ids) == 1 and killed_run_id not in run_ids
    assert sorted(timings.column("request_id").to_pylist()) == sorted(plan.column("request_id").to_pylist())
    assert journal_to_table(killed_journal).num_rows == len(killed_rows)  # the rerun did not overwrite it
    assert (out / "evidence_pack.json").exists()

    files = [path for path in out.rglob("*") if path.is_file()]
    assert any(".dagster" in path.parts for path in files) and any(path.suffix == ".parquet" for path in files)
    files += [tmp_path / f"{name}.{stream}" for name in ("killed", "rerun") for stream in ("stdout", "stderr")]
    assert (tmp_path / "rerun.stdout").read_text().strip()  # the CLI did print its headline
    leaks = [str(path) for path in files if API_KEY.encode() in path.read_bytes()]
    assert leaks == []


def test_journal_read_in_batches_keeps_order_and_skips_only_a_torn_last_line(tmp_path: Path, monkeypatch) -> None:
    from pipeline.replay.recording import journal as journal_module

    monkeypatch.setattr(journal_module, "BATCH_ROWS", 4)
    path = tmp_path / "j.jsonl"
    with journal_module.Journal(path) as journal:
        for i in range(11):  # three batches: 4 + 4 + 3
            journal.append({"run_id": "r", "candidate": "c", "request_id": f"q{i}", "status": "ok"})
    with path.open("a") as handle:
        handle.write('{"run_id": "r", "request_')  # killed mid-write
    table = journal_module.journal_to_table(path)
    assert table.column("request_id").to_pylist() == [f"q{i}" for i in range(11)]
    assert table.column(0).num_chunks == 1
