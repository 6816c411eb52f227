"""Shards on a Dask cluster: one plan over N `dask worker` processes, meeting at the scheduler's
barrier, against the reference endpoint's zero-delay profile. Prints what the test cannot assert
(no timing thresholds in tests): each worker's clock offset to the scheduler and the RTT of the
kept sample, the spread of the shards' real starts, the schedule lag p99 at a rate above one
worker's own limit, and that limit (the client roofline, pipeline/replay/client_validity/roofline.py, run in one
worker process).

    .venv/bin/python bench/distributed_shards.py [--workers 2] [--duration 5] [--rate R] [--events 16]

Without --rate the run asks for 1.5 × one worker's roofline (a rate one worker cannot drive
alone, two could). Everything runs on this host: the scheduler in this process, the workers and
the endpoint in processes of their own; all of them read one CLOCK_MONOTONIC, so the measured
offsets *are* the alignment error (the true offset is 0), and the shards' real starts can be
compared on the raw clock (`t - clock_offset_ns`), which a multi-host run cannot do.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pipeline.reference import ReferenceServer  # noqa: E402
from pipeline.replay.client_validity.calibration import ECHO_MODEL  # noqa: E402
from pipeline.replay.recording.records import PlannedRequest  # noqa: E402

BARRIER_TIMEOUT_S = 120.0


def one_worker_roofline(base_url: str, events: int) -> dict:
    """The client roofline as every calibration runs it, inside one Dask worker process."""
    from pipeline.replay.client_validity.roofline import DEFAULT_ROOFLINE, echo_step_runner, search
    from pipeline.replay.pacing.engine import ReplaySettings

    runner = echo_step_runner(base_url, ECHO_MODEL, ReplaySettings(mode="rate"), 1.0)
    return search(runner, events, DEFAULT_ROOFLINE, None)


def run_shard(plan: list, index: int, count: int, base_url: str, barrier: str, folder: str, duration_s: float) -> dict:
    """One shard, as `replay_shard` runs it: its share of the plan, from the scheduler's barrier."""
    from dataclasses import asdict

    from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
    from pipeline.replay.production.shards import DASK_ENGINE, Shard, StartBarrier, shard_plan
    from pipeline.replay.recording.journal import Journal

    shard = Shard(index, count, barrier, DASK_ENGINE)
    start = StartBarrier(shard, BARRIER_TIMEOUT_S)
    settings = ReplaySettings(mode="rate", request_timeout_s=5.0, max_duration_s=duration_s + 10)
    Path(folder).mkdir(parents=True, exist_ok=True)
    with Journal(Path(folder) / f"{shard.label}.jsonl") as journal:
        stats = run_replay(
            shard_plan(plan, shard), Target("bench", base_url, ECHO_MODEL), settings, "bench", journal, start
        )
    return {
        "candidate": "bench",
        "shard": shard,
        "journal": str(journal.path),
        "stats": asdict(stats),
        "pid": os.getpid(),
        **start.report(),
    }


def constant_rate_plan(rate: float, duration_s: float, events: int) -> list[PlannedRequest]:
    return [
        PlannedRequest(f"d{index:06d}", index / rate, [{"role": "user", "content": f"w{index % 97} " * 32}], events, 32)
        for index in range(int(rate * duration_s))
    ]


def start_workers(address: str, names: list[str]) -> list[subprocess.Popen]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny"]
    return [
        subprocess.Popen(
            [*command, "--name", name, "--no-dashboard"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for name in names
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(timings, summary, plan, rate: float, single: dict) -> None:
    rows = timings.to_pylist()
    ids = [row["request_id"] for row in rows]
    print(
        f"requests: {len(plan)} planned, {len(ids)} rows, {len(set(ids))} distinct, every one once: "
        f"{sorted(ids) == sorted(p.request_id for p in plan)}"
    )
    for shard in summary["shards"]:
        print(
            f"  shard {shard['shard']} on {shard['worker']} (pid {shard['pid']}): offset to the scheduler "
            f"{shard['clock_offset_ns'] / 1e3:+.1f} µs, kept sample's RTT {shard['clock_rtt_ns'] / 1e3:.1f} µs, "
            f"{shard['sent']} sent, {shard['errors']} errors"
        )
    # the start each shard put offset 0 at: on the common timeline (by construction one instant) and
    # on the raw shared clock (one host: the real spread, i.e. the offsets' error)
    common, raw = {}, {}
    for row in rows:
        if row["t_scheduled_ns"] is None:
            continue
        start = row["t_scheduled_ns"] - round(row["scheduled_offset_s"] * 1e9)
        common.setdefault(row["worker"], set()).add(start)
        raw.setdefault(row["worker"], set()).add(start - row["clock_offset_ns"])
    spread = lambda starts: (max(min(s) for s in starts.values()) - min(min(s) for s in starts.values())) / 1e6  # noqa: E731
    print(f"starts spread: {spread(common):.3f} ms on the scheduler's timeline, {spread(raw):.3f} ms on the raw clock")
    print(f"{len(summary['shards'])} workers: " + lag_line(rows, rate, summary))
    limit = single["sends_per_s"]
    print(
        f"one worker's roofline: {limit or 0:.0f} sends/s ({single['stopped_by']}"
        + (", a lower bound" if single["lower_bound"] else "")
        + (f"); the run asked {rate / limit:.2f}× that" if limit else ")")
    )


def lag_line(rows: list[dict], rate: float, summary: dict) -> str:
    lags = [row["schedule_lag_ms"] for row in rows if row["schedule_lag_ms"] is not None]
    sent = sorted(row["t_sent_ns"] for row in rows if row["t_sent_ns"] is not None)
    achieved = (len(sent) - 1) / ((sent[-1] - sent[0]) / 1e9) if len(sent) > 1 else 0.0
    return (
        f"rate asked {rate:.0f}/s, achieved {achieved:.0f} sends/s; schedule lag p50 {percentile(lags, 0.5):.2f} ms, "
        f"p99 {percentile(lags, 0.99):.2f} ms, max {max(lags):.2f} ms; errors {summary['errors']}, "
        f"unsent {summary['unsent']}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of planned sends")
    parser.add_argument("--rate", type=float, default=None, help="requests/s (default: 1.5 × one worker's roofline)")
    parser.add_argument("--events", type=int, default=16, help="SSE events per reply")
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    from pipeline.replay.production.shards import merge_shards
    from pipeline.spec.workload import Replay

    names = [f"bench-worker-{index}" for index in range(args.workers)]
    with (
        ReferenceServer("zero") as server,
        LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster,
        tempfile.TemporaryDirectory(prefix="loadproof-dask-bench-") as folder,
    ):
        workers = start_workers(cluster.scheduler_address, names)
        try:
            with Client(cluster.scheduler_address) as client:
                client.wait_for_workers(args.workers, timeout=180)
                single = client.submit(one_worker_roofline, server.base_url, args.events, workers=[names[0]]).result()
                rate = args.rate or 1.5 * (single["sends_per_s"] or 100.0)
                plan = constant_rate_plan(rate, args.duration, args.events)
                futures = [
                    client.submit(
                        run_shard,
                        plan,
                        index,
                        args.workers,
                        server.base_url,
                        f"bench/{os.getpid()}",
                        folder,
                        args.duration,
                        workers=[name],
                        pure=False,
                    )
                    for index, name in enumerate(names)
                ]
                reports = client.gather(futures)
                # the same plan from one worker alone, for comparison (no barrier: one shard)
                alone = client.submit(
                    run_shard,
                    plan,
                    0,
                    1,
                    server.base_url,
                    f"bench/{os.getpid()}/alone",
                    f"{folder}/alone",
                    args.duration,
                    workers=[names[0]],
                    pure=False,
                ).result()
            timings, summary = merge_shards(reports, Replay(mode="rate", rate_per_s=rate))
            report(timings, summary, plan, rate, single)
            one_timings, one_summary = merge_shards([alone], Replay(mode="rate", rate_per_s=rate))
            print("1 worker alone, same plan: " + lag_line(one_timings.to_pylist(), rate, one_summary))
        finally:
            for worker in workers:
                worker.terminate()
                worker.wait(timeout=60)


if __name__ == "__main__":
    main()
