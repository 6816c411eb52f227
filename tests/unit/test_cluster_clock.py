"""The shards' clock alignment on a cluster (pipeline/replay/production/cluster_clock.py) and how the merge
places each shard's rows on the coordinator's timeline (pipeline/replay/production/shards.py)."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.contracts import SERVER_METRICS
from pipeline.files.layout import PackLayout, write_parquet
from pipeline.replay.production.cluster_clock import ClockSample, common_start, min_rtt_offset
from pipeline.replay.production.shards import DASK_ENGINE, align_server_metrics, merge_shards, shards_for
from pipeline.replay.recording.journal import Journal
from pipeline.spec.workload import Replay


def test_the_round_trip_with_the_smallest_rtt_sets_the_offset():
    samples = [
        ClockSample(t_send_ns=1_000, coordinator_ns=9_000, t_recv_ns=5_000),  # rtt 4000: queued somewhere
        ClockSample(t_send_ns=10_000, coordinator_ns=15_600, t_recv_ns=10_400),  # rtt 400: kept
        ClockSample(t_send_ns=20_000, coordinator_ns=26_000, t_recv_ns=21_000),  # rtt 1000
    ]
    best = min_rtt_offset(samples)
    assert (best.rtt_ns, best.offset_ns) == (400, 15_600 - 10_200)


def test_no_samples_is_an_error_not_a_zero_offset():
    with pytest.raises(ValueError, match="no clock samples"):
        min_rtt_offset([])


def test_every_shard_computes_the_same_start_from_the_same_ready_instants():
    assert common_start([5_000, 9_000, 7_000], lead_ns=1_000) == 10_000


def _report(tmp_path: Path, shard, worker: str, offset_ns: int, rtt_ns: int, local_start_ns: int) -> dict:
    path = tmp_path / f"{shard.label}.jsonl"
    with Journal(path) as journal:
        journal.append(
            {
                "run_id": "r1",
                "candidate": "alpha",
                "request_id": f"q{shard.index}",
                "status": "ok",
                "scheduled_offset_s": 0.0,
                "t_scheduled_ns": local_start_ns,
                "t_sent_ns": local_start_ns + 50,
                "t_end_ns": local_start_ns + 900,
                "chunk_offsets_ns": [100, 200],
            }
        )
    stats = {"planned": 1, "sent": 1, "errors": 0, "unsent": 0, "retries": 0, "peak_in_flight": 1, "wall_s": 1.0}
    return {
        "candidate": "alpha",
        "shard": shard,
        "journal": str(path),
        "stats": stats,
        "pid": 100 + shard.index,
        "clock": "coordinator",
        "worker": worker,
        "clock_offset_ns": offset_ns,
        "clock_rtt_ns": rtt_ns,
    }


def test_each_shards_rows_move_onto_the_coordinators_timeline_with_their_own_offset(tmp_path: Path) -> None:
    first, second = shards_for(2, tmp_path / "barrier", "dask")
    # two clocks 7 µs apart, both starting at coordinator instant 1_000_000
    reports = [
        _report(tmp_path, first, "worker-a", offset_ns=400_000, rtt_ns=300, local_start_ns=600_000),
        _report(tmp_path, second, "worker-b", offset_ns=407_000, rtt_ns=500, local_start_ns=593_000),
    ]
    timings, summary = merge_shards(reports, Replay(mode="rate", rate_per_s=10))
    rows = timings.to_pylist()
    assert [row["t_scheduled_ns"] for row in rows] == [1_000_000, 1_000_000]  # one start on the common timeline
    assert [row["t_sent_ns"] for row in rows] == [1_000_050, 1_000_050]
    assert [row["chunk_offsets_ns"] for row in rows] == [[100, 200], [100, 200]]  # durations: untouched
    assert [(row["worker"], row["clock_offset_ns"]) for row in rows] == [("worker-a", 400_000), ("worker-b", 407_000)]
    # each worker's own clock is kept: the value minus its offset
    assert [row["t_end_ns"] - row["clock_offset_ns"] for row in rows] == [600_900, 593_900]
    assert [(s["worker"], s["clock_offset_ns"], s["clock_rtt_ns"]) for s in summary["shards"]] == [
        ("worker-a", 400_000, 300),
        ("worker-b", 407_000, 500),
    ]


def test_shards_on_one_hosts_file_barrier_keep_their_rows_as_they_are(tmp_path: Path) -> None:
    (only,) = shards_for(1, tmp_path / "barrier")
    report = _report(tmp_path, only, "w", 5, 1, local_start_ns=1_000)
    for key in ("worker", "clock_offset_ns", "clock_rtt_ns"):
        del report[key]
    timings, _ = merge_shards([report], Replay(mode="rate", rate_per_s=10))
    assert "worker" not in timings.schema.names and timings.column("t_scheduled_ns").to_pylist() == [1_000]


def test_shard_0s_metrics_scrapes_move_with_its_rows(tmp_path: Path) -> None:
    layout = PackLayout(tmp_path)
    write_parquet(
        pa.table({"t_ns": pa.array([1_000, 2_000], pa.int64()), "value": [1.0, 2.0]}), layout.path(SERVER_METRICS)
    )
    first, second = shards_for(2, tmp_path / "barrier", "dask")
    reports = [
        _report(tmp_path, second, "worker-b", offset_ns=9, rtt_ns=1, local_start_ns=0),
        _report(tmp_path, first, "worker-a", offset_ns=500, rtt_ns=1, local_start_ns=0),
    ]
    align_server_metrics(layout, reports)
    assert pq.read_table(layout.path(SERVER_METRICS)).column("t_ns").to_pylist() == [1_500, 2_500]
    assert first.engine == DASK_ENGINE


def test_off_dask_the_metrics_scrapes_stay_as_they_are(tmp_path: Path) -> None:
    layout = PackLayout(tmp_path)
    write_parquet(pa.table({"t_ns": pa.array([1_000], pa.int64())}), layout.path(SERVER_METRICS))
    (only,) = shards_for(1, tmp_path / "barrier")
    report = _report(tmp_path, only, "w", 5, 1, local_start_ns=0)
    del report["clock_offset_ns"]
    align_server_metrics(layout, [report])
    assert pq.read_table(layout.path(SERVER_METRICS)).column("t_ns").to_pylist() == [1_000]
