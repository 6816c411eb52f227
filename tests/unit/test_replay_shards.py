"""Merging a sharded replay: the shards' journals into one raw-timings table, their stats into the
replay summary (the arithmetic the merge op delegates to `merge_shards`)."""

from pathlib import Path

from pipeline.replay.production.shards import merge_shards, shards_for
from pipeline.replay.recording.journal import Journal
from pipeline.spec.workload import Replay


def _report(tmp_path: Path, shard, request_ids: list[str], stats: dict, pid: int) -> dict:
    path = tmp_path / f"{shard.label}.jsonl"
    with Journal(path) as journal:
        for request_id in request_ids:
            journal.append({"run_id": "r1", "candidate": "alpha", "request_id": request_id, "status": "ok"})
    return {
        "candidate": "alpha",
        "shard": shard,
        "journal": str(path),
        "stats": stats,
        "pid": pid,
        "clock": "monotonic",
    }


def _stats(planned: int, sent: int, errors: int, unsent: int, retries: int, peak: int, wall_s: float) -> dict:
    return {
        "planned": planned,
        "sent": sent,
        "errors": errors,
        "unsent": unsent,
        "retries": retries,
        "in_flight": 0,
        "peak_in_flight": peak,
        "wall_s": wall_s,
    }


def test_merge_shards_concatenates_in_shard_order_and_sums_the_stats(tmp_path: Path) -> None:
    first, second = shards_for(2, tmp_path / "barrier")
    reports = [  # arrive in completion order, not shard order
        _report(tmp_path, second, ["q2", "q4"], _stats(2, 2, 1, 0, 3, 2, 4.5), pid=202),
        _report(tmp_path, first, ["q1", "q3", "q5"], _stats(3, 2, 0, 1, 0, 3, 6.0), pid=101),
    ]
    timings, summary = merge_shards(reports, Replay(mode="trace", time_scale=0.5))

    assert timings.column("request_id").to_pylist() == ["q1", "q3", "q5", "q2", "q4"]
    assert timings.column("shard").to_pylist() == [0, 0, 0, 1, 1]
    assert set(timings.column("load_level").to_pylist()) == {2.0}  # time_scale 0.5: twice the logged traffic
    assert set(timings.column("load_level_label").to_pylist()) == {"2×"}

    totals = {"planned": 5, "sent": 4, "errors": 1, "unsent": 1, "retries": 3, "peak_in_flight": 5, "wall_s": 6.0}
    assert summary == {
        "mode": "trace",
        **totals,
        "candidates": {"alpha": totals},
        "shards": [
            {"shard": 0, "pid": 101, "clock": "monotonic", **_stats(3, 2, 0, 1, 0, 3, 6.0)},
            {"shard": 1, "pid": 202, "clock": "monotonic", **_stats(2, 2, 1, 0, 3, 2, 4.5)},
        ],
    }
    assert list(summary)[:3] == ["mode", "planned", "candidates"]  # the document's key order is kept


def test_merge_shards_of_one_shard_is_that_replay(tmp_path: Path) -> None:
    (only,) = shards_for(1, tmp_path / "barrier")
    report = _report(tmp_path, only, ["q1"], _stats(1, 1, 0, 0, 0, 1, 0.5), pid=7)
    timings, summary = merge_shards([report], Replay(mode="concurrency", concurrency=4))
    assert timings.num_rows == 1 and timings.column("shard").to_pylist() == [0]
    assert timings.column("load_level_label").to_pylist() == ["4 in flight"]
    totals = {"planned": 1, "sent": 1, "errors": 0, "unsent": 0, "retries": 0, "peak_in_flight": 1, "wall_s": 0.5}
    assert summary["candidates"] == {"alpha": totals} and {k: summary[k] for k in totals} == totals
    assert summary["shards"] == [{"shard": 0, "pid": 7, "clock": "monotonic", **_stats(1, 1, 0, 0, 0, 1, 0.5)}]


def test_merge_shards_keeps_the_worst_shards_loop_receipt_lag(tmp_path: Path) -> None:
    first, second = shards_for(2, tmp_path / "barrier")
    reports = [
        _report(tmp_path, first, ["q1"], {**_stats(1, 1, 0, 0, 0, 1, 1.0), "loop_lag_p99_ms": 2.5}, pid=101),
        _report(tmp_path, second, ["q2"], {**_stats(1, 1, 0, 0, 0, 1, 1.0), "loop_lag_p99_ms": 7.0}, pid=202),
    ]
    _, summary = merge_shards(reports, Replay(mode="trace"))
    assert summary["loop_lag_p99_ms"] == 7.0  # each shard has its own loop: the figure is the worst
