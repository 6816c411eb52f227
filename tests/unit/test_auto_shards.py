"""`workload.replay.shards: auto` (issue 45 item 1): one client process per 128 streams in flight at
the peak, so no event loop holds more streams than it stamps within a few ms of the wire."""

import pytest
from pydantic import ValidationError

from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.production import auto_shards
from pipeline.replay.production.auto_shards import (
    AUTO,
    STREAMS_PER_PROCESS,
    one_process_enough,
    resolved_shards,
    shards_for_streams,
)
from pipeline.spec import Spec, workload
from tests.support.specs import demo_spec_dict


def plan(offsets: list[float | None]) -> list[float | None]:
    return offsets  # the plan's scheduled_offset_s, as plan_replay_shards reads them


def test_one_process_per_128_streams_at_the_peak():
    assert auto_shards.MAX_SHARDS == workload.MAX_SHARDS  # the rule never asks for more than the spec allows
    assert [shards_for_streams(n) for n in (0, 1, 128, 129, 256, 257, 100_000)] == [1, 1, 1, 2, 2, 3, 64]


def test_a_closed_loop_is_sized_by_its_concurrency():
    closed = ReplaySettings(mode="concurrency", concurrency=300)
    assert resolved_shards(AUTO, plan([None] * 600), closed, None)[0] == 3
    assert resolved_shards(AUTO, plan([None] * 600), ReplaySettings(mode="concurrency", concurrency=64), None)[0] == 1


def test_an_open_loop_is_sized_by_its_sends_within_a_requests_logged_time_in_flight():
    """400 requests/s for 5 s: about 400 in flight if a request lasts 1 s (the log says nothing),
    1,024 (the pool's cap) if the log's requests lasted 3 s; a cap on requests in flight caps it."""
    offsets = [i / 400 for i in range(2000)]
    trace = ReplaySettings(mode="trace")
    assert resolved_shards(AUTO, plan(offsets), trace, None)[0] == 4  # ⌈400 / 128⌉
    assert resolved_shards(AUTO, plan(offsets), trace, 500.0)[0] == 4  # a latency under 1 s: 1 s
    assert resolved_shards(AUTO, plan(offsets), trace, 3000.0)[0] == 8  # ⌈1,024 / 128⌉
    capped = ReplaySettings(mode="trace", max_concurrency=STREAMS_PER_PROCESS)
    count, why = resolved_shards(AUTO, plan(offsets), capped, 3000.0)
    assert count == 1 and why.startswith("auto → 1: about 128 streams in flight")


def test_a_number_stays_and_until_resolved_keeps_one_process():
    assert resolved_shards(3, plan([0.0]), ReplaySettings(mode="trace"), None)[0] == 3
    count, why = resolved_shards(
        AUTO, plan([None] * 600), ReplaySettings(mode="concurrency", concurrency=600), None, True
    )
    assert count == 1 and "until: resolved" in why


def test_the_spec_takes_auto_or_a_number_from_1_to_64():
    data = demo_spec_dict()
    data["workload"]["replay"]["shards"] = "auto"
    assert Spec.model_validate(data).workload.replay.shards == AUTO
    data["workload"]["replay"]["until"] = "resolved"  # auto with until: one shard at run time, not an error
    assert Spec.model_validate(data).workload.replay.shards == AUTO
    for wrong in (0, 65, "many"):
        data["workload"]["replay"]["shards"] = wrong
        with pytest.raises(ValidationError):
            Spec.model_validate(data)


def test_the_runner_keeps_a_replay_in_process_only_where_one_shard_is_sure():
    assert one_process_enough(1, "trace", None, None) and not one_process_enough(2, "trace", None, None)
    assert one_process_enough(AUTO, "concurrency", 128, None) and not one_process_enough(AUTO, "concurrency", 129, None)
    assert one_process_enough(AUTO, "trace", None, 64) and not one_process_enough(AUTO, "trace", None, None)
