"""One plan across worker processes (Dagster's multiprocess executor, or Dask workers) with one common start time."""

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from dagster import AssetKey

from assets.runner import (
    asset_keys_by_partitioning,
    execute_partition_multiprocess,
    instance_for,
)
from assets.support.partitions import register
from pipeline import REPO_ROOT
from pipeline.definitions import build_definitions
from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.production.shards import common_start_ns, shard_plan, shard_settings, shards_for
from pipeline.replay.recording.records import PlannedRequest
from tests.support.specs import small_spec


def planned(count: int) -> list[PlannedRequest]:
    return [PlannedRequest(f"r{i}", i * 0.1, [{"role": "user", "content": "x"}], 4, 1) for i in range(count)]


def test_shards_split_the_plan_round_robin_and_keep_every_request_once(tmp_path):
    plan = planned(10)
    shards = shards_for(3, tmp_path)
    parts = [shard_plan(plan, shard) for shard in shards]
    assert [[p.request_id for p in part] for part in parts] == [
        ["r0", "r3", "r6", "r9"],
        ["r1", "r4", "r7"],
        ["r2", "r5", "r8"],
    ]
    merged = sorted((p for part in parts for p in part), key=lambda p: p.scheduled_offset_s)
    assert merged == plan


def test_a_sessions_turns_stay_in_one_shard(tmp_path):
    plan = planned(6)
    plan[2] = PlannedRequest("r2", None, [], 4, 1, session_id="s", session_turn=2, follows_request_id="r0")
    plan[4] = PlannedRequest("r4", None, [], 4, 1, session_id="s", session_turn=3, follows_request_id="r2")
    parts = [[p.request_id for p in shard_plan(plan, shard)] for shard in shards_for(2, tmp_path)]
    assert parts == [["r0", "r2", "r3", "r4"], ["r1", "r5"]]


def test_the_fixed_concurrency_is_split_across_shards_without_loss(tmp_path):
    settings = ReplaySettings(mode="concurrency", concurrency=10, max_concurrency=None)
    split = [shard_settings(settings, shard).concurrency for shard in shards_for(3, tmp_path)]
    assert split == [4, 3, 3] and sum(split) == 10
    assert shard_settings(settings, shards_for(3, tmp_path)[0]).max_concurrency is None


def _start_in_a_process(shard, queue) -> None:
    queue.put(common_start_ns(shard, timeout_s=60))


def test_shards_in_separate_processes_agree_on_one_start_instant(tmp_path):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_start_in_a_process, args=(shard, queue)) for shard in shards_for(2, tmp_path)]
    for worker in workers:
        worker.start()
    starts = [queue.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert starts[0] == starts[1] and starts[0][1] == "monotonic"


def test_a_shard_alone_times_out_with_a_clear_error(tmp_path):
    (shard, _) = shards_for(2, tmp_path)
    with pytest.raises(TimeoutError, match="only 1 of 2 shards ready"):
        common_start_ns(shard, timeout_s=0.05)


def replay_two_shards(write_spec, base_url: str, out: Path, version: str, **replay) -> tuple[str, list[str], list[str]]:
    """A run of its own, not the shared demo pack (tests/e2e/conftest.py): the shared inputs, then
    one partition's raw timings with `replay.shards: 2` (and `replay`'s other settings) on the
    executor the spec names. Returns the partition run's id, its failed blocking checks and its log messages."""
    data = yaml.safe_load(small_spec(write_spec, base_url).read_text())
    data["workload"]["replay"].update(shards=2, **replay)
    return replay_sharded(write_spec, data, out, version)


def replay_sharded(write_spec, data: dict, out: Path, version: str) -> tuple[str, list[str], list[str]]:
    """`replay_two_shards` for the spec `data` as it is."""
    spec = write_spec(data)
    job = build_definitions(spec, out).resolve_job_def("revalidation")
    with instance_for(out) as instance:
        shared, _ = asset_keys_by_partitioning()
        assert job.execute_in_process(instance=instance, asset_selection=shared).success
        key = register(instance, "fastserve-8b", version)
        result = execute_partition_multiprocess((str(spec), str(out), "{}"), instance, key, [AssetKey("raw_timings")])
        assert result.success
        failed = [
            e.check_name for e in result.get_asset_check_evaluations() if not e.passed and e.severity.value == "ERROR"
        ]
        return result.run_id, failed, [e.message or "" for e in instance.all_logs(result.run_id)]


def sharded_outputs(out: Path, version: str) -> tuple[list[dict], list[dict], dict]:
    """The partition's raw timings, the shared plan, and the partition's replay summary."""
    folder = out / "candidates" / "fastserve-8b" / version / "data"
    timings = pq.read_table(folder / "raw_timings.parquet").to_pylist()
    plan = pq.read_table(out / "data" / "replay_plan.parquet").to_pylist()
    return timings, plan, json.loads((folder / "replay_summary.json").read_text())


# `replay.shards: 2` on Dagster's multiprocess executor (the raw timings only, after the shared inputs).
@pytest.mark.slow
def test_two_shards_in_two_processes_replay_the_plan_from_one_start(tmp_path, write_spec, zero_server, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "pack"
    _, failed, _ = replay_two_shards(write_spec, zero_server.base_url, out, "v-shards")
    assert failed == []

    timings, plan, summary = sharded_outputs(out, "v-shards")
    assert sorted(r["request_id"] for r in timings) == sorted(p["request_id"] for p in plan)  # every request once
    assert {r["shard"] for r in timings} == {0, 1}
    assert len({s["pid"] for s in summary["shards"]}) == 2  # two worker processes
    # one common start: every row of both shards puts offset 0 at the same monotonic instant
    starts = {
        r["t_scheduled_ns"] - int(r["scheduled_offset_s"] * 1e9) for r in timings if r["t_scheduled_ns"] is not None
    }
    assert len(starts) == 1
    # the merged arrival pattern is the plan's: scheduled instants in the plan's offset order,
    # and the two processes' sends interleave rather than run one after the other
    by_schedule = sorted(timings, key=lambda r: r["t_scheduled_ns"])
    assert [r["request_id"] for r in by_schedule] == [
        p["request_id"] for p in sorted(plan, key=lambda p: p["scheduled_offset_s"])
    ]
    sent = {shard: sorted(r["t_sent_ns"] for r in timings if r["shard"] == shard) for shard in (0, 1)}
    assert sent[1][0] < sent[0][-1] and sent[0][0] < sent[1][-1]


# `replay.shards: auto` (issue 45 item 1): a closed loop of 130 streams is more than one process holds
# (128), so the replay runs in two, sized at run time from the plan, and says why.
@pytest.mark.slow
def test_auto_shards_split_a_loop_of_130_streams_over_two_processes(tmp_path, write_spec, zero_server, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "pack"
    spec = yaml.safe_load(small_spec(write_spec, zero_server.base_url).read_text())
    spec["workload"]["sample"].update(window_s=60)  # ~200 requests: more than 130 to send
    spec["workload"]["replay"].update(shards="auto", mode="concurrency", concurrency=130, sessions="off")
    for closed_loop_only in ("sweep", "arms"):  # the raw timings only: no other replay runs
        spec["workload"]["replay"].pop(closed_loop_only, None)
    _, failed, messages = replay_sharded(write_spec, spec, out, "v-auto")
    assert failed == []
    timings, plan, summary = sharded_outputs(out, "v-auto")
    assert len(plan) > 130 and sorted(r["request_id"] for r in timings) == sorted(p["request_id"] for p in plan)
    assert {r["shard"] for r in timings} == {0, 1} and len({s["pid"] for s in summary["shards"]}) == 2
    assert any(m.startswith("shards: auto → 2: about 130 streams in flight") for m in messages)


# --- the same partition on a Dask cluster (`workload.replay.executor: dask`) ------------------------


@pytest.fixture
def dask_cluster():
    """A scheduler in this process and two `dask worker` processes of their own, with their own
    names, started the way a production cluster's are (one thread each: Dagster is not
    thread-safe); the test's repository on their import path and the candidate's key in their
    environment (the steps that call the endpoint run there)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
            "LOADPROOF_DEMO_API_KEY": "k",
        }
        workers = [
            subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address]
                + ["--name", name, "--nthreads", "1", "--nworkers", "1", "--no-nanny", "--no-dashboard"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for name in DASK_WORKERS
        ]
        try:
            with distributed.Client(cluster.scheduler_address) as client:
                client.wait_for_workers(len(DASK_WORKERS), timeout=180)
                yield cluster, client
        finally:
            for worker in workers:
                worker.terminate()
                worker.wait(timeout=60)


DASK_WORKERS = ("loadproof-worker-a", "loadproof-worker-b")


@pytest.mark.slow
def test_two_shards_on_two_dask_workers_meet_on_the_scheduler(
    tmp_path, write_spec, zero_server, monkeypatch, dask_cluster
):
    cluster, client = dask_cluster
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "pack"
    run_id, _, messages = replay_two_shards(
        write_spec, zero_server.base_url, out, "v-dask", executor="dask", dask_scheduler=cluster.scheduler_address
    )
    submitted = [m for m in messages if "to the Dask cluster" in m]

    assert any("replay_shard[shard_0]" in m for m in submitted) and any("replay_shard[shard_1]" in m for m in submitted)
    timings, plan, summary = sharded_outputs(out, "v-dask")
    assert sorted(r["request_id"] for r in timings) == sorted(p["request_id"] for p in plan)  # every request once
    shards = {s["shard"]: s for s in summary["shards"]}
    # each shard on a worker of its own (the names the workers were started with), another process
    assert sorted(s["worker"] for s in shards.values()) == sorted(DASK_WORKERS)
    assert len({s["pid"] for s in shards.values()} | {os.getpid()}) == 3
    # each recorded its clock against the scheduler: the offset and the round trip of its kept sample
    assert all(s["clock"] == "coordinator" and s["clock_rtt_ns"] > 0 for s in shards.values())
    for row in timings:
        assert (row["worker"], row["clock_offset_ns"]) == (
            shards[row["shard"]]["worker"],
            shards[row["shard"]]["clock_offset_ns"],
        )
    # the barrier went through the scheduler: each shard's ready document is there, by worker
    barrier = out / "candidates" / "fastserve-8b" / "v-dask" / "journal" / f"{run_id}-start-barrier"
    ready = [distributed_variable(client, f"{barrier}/ready/{index}") for index in (0, 1)]
    assert [document["worker"] for document in ready] == [shards[0]["worker"], shards[1]["worker"]]
    assert not barrier.exists()  # and not through a file
    # on the scheduler's timeline both shards put offset 0 at one instant (each converted its own clock)
    starts = {
        r["t_scheduled_ns"] - int(r["scheduled_offset_s"] * 1e9) for r in timings if r["t_scheduled_ns"] is not None
    }
    assert len(starts) == 1


def distributed_variable(client, name: str):
    from distributed import Variable

    return Variable(name, client=client).get(timeout=10)
