"""The shards' start barrier through a Dask scheduler (pipeline/replay/production/cluster_clock.py): two
tasks on two worker processes of a local cluster meet there and agree on one start."""

import os

import pytest

from pipeline.replay.production.cluster_clock import DaskBarrier

distributed = pytest.importorskip("distributed")


def _meet(name: str, index: int) -> dict:
    barrier = DaskBarrier(name, index, 2, timeout_s=60, lead_ns=50_000_000)
    start_ns = barrier.wait()
    clock = barrier.clock
    assert clock is not None
    return {"pid": os.getpid(), "start_ns": start_ns, **clock.to_dict()}


@pytest.fixture(scope="module")
def cluster():
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local,
        distributed.Client(local) as client,
    ):
        yield local, client


def test_two_workers_meet_on_the_scheduler_and_agree_on_one_start(cluster):
    local, client = cluster
    workers = sorted(client.scheduler_info()["workers"])
    futures = [client.submit(_meet, "it/barrier", index, workers=[workers[index]], pure=False) for index in (0, 1)]
    met = client.gather(futures)
    assert len({m["worker"] for m in met}) == 2 and len({m["pid"] for m in met} | {os.getpid()}) == 3
    assert all(m["samples"] > 1 and m["rtt_ns"] > 0 for m in met)
    # on the scheduler's timeline both starts are one instant (each converted with its own offset)
    assert met[0]["start_ns"] + met[0]["offset_ns"] == met[1]["start_ns"] + met[1]["offset_ns"]
    # and each shard's ready document is on the scheduler, under the barrier's name
    ready = [distributed.Variable(f"it/barrier/ready/{index}", client=client).get(timeout=5) for index in (0, 1)]
    assert [document["worker"] for document in ready] == [m["worker"] for m in met]


def test_a_shard_alone_times_out_naming_the_barrier(cluster):
    _, client = cluster
    barrier = DaskBarrier("it/alone", 0, 2, timeout_s=0.2, lead_ns=0, client=client)
    with pytest.raises(TimeoutError, match=r"only 1 of 2 shards ready .*barrier it/alone on the Dask scheduler"):
        barrier.wait()
