"""Users at an SLO tier on a real sweep: a closed loop replayed against the reference endpoint at
several levels in flight, the levels' per-user tier judged by sql/per_user_tier.sql and the users
at the tier read from them, with the bracket and the cost per user-hour (real HTTP, real DuckDB)."""

from pathlib import Path

import pytest

from pipeline.analysis.judge.figures import capacity_figures
from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.sizing.capacity import capacity_rows
from pipeline.analysis.sizing.users_at_tier import CLOSED_LOOP_USERS
from pipeline.reference import ReferenceServer
from pipeline.replay.conditions.sweep import production_level, run_sweep, with_load_level
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import RunBuilder, execute
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from tests.support.profiles import one_at_a_time_profile
from tests.support.specs import demo_spec_dict


# one sequence at a time, 10 ms per output token on the server's own clock: a 40-token reply holds
# the server 400 ms and streams at ~100 tokens/s whatever the load; at k in flight a request waits
# for the k − 1 others ahead of it, so its first token comes (k − 1) × 400 ms after its send
@pytest.fixture(scope="module")
def serial_server(tmp_path_factory):
    with ReferenceServer(str(one_at_a_time_profile(tmp_path_factory.mktemp("profile")))) as server:
        yield server


def tier_spec() -> Spec:
    """Production at 1 in flight, then 2, 3 and 6; the SLA loose (every level meets it: the sweep
    runs them all); the tier: ≥ 50 tokens/s per stream with TTFT ≤ 1.2 s, which a stream keeps while
    at most two others are ahead of it (TTFT ~800 ms at 3 in flight, ~2 s at 6: 400 ms or more
    either side of the ceiling)."""
    data = demo_spec_dict()
    data["candidates"] = [dict(data["candidates"][0], name="serial", price={"usd_per_hour": 3.6})]
    data["workload"]["replay"] = {
        "mode": "concurrency",
        "concurrency": 1,
        "warmup_s": 0,
        "cooldown_s": 0,
        "sweep": {"concurrencies": [2, 3, 6], "requests_per_level": 10},
    }
    data["sla"] = {
        "e2e_ms": 60_000,
        "min_attainment": 0.95,
        "max_error_rate": 0.05,
        "per_user": {"output_tokens_per_s_min": 50, "ttft_ms_max": 1200},
    }
    return Spec.model_validate(data)


def test_users_at_the_tier_on_a_sweep_against_the_reference_endpoint(tmp_path: Path, serial_server):
    spec = tier_spec()
    replay = spec.workload.replay
    requests = [
        PlannedRequest(f"q{i}", None, [{"role": "user", "content": f"hello {i}"}], 40, 3, min_tokens=40)
        for i in range(10)
    ]
    target = Target("serial", serial_server.base_url, "reference-model")
    runs = RunBuilder(
        target, ReplaySettings(mode="concurrency", concurrency=1), "run-p", lambda name: tmp_path / f"{name}.jsonl"
    )
    production = with_load_level(execute(runs.run("production", requests)).timings(), production_level(replay))
    timings, record = run_sweep(requests, replay, runs)

    levels = {row["load_level"]: row for row in sweep_analysis.sweep_levels(production, timings, spec).to_pylist()}
    assert sorted(levels) == [1.0, 2.0, 3.0, 6.0]
    for value, row in levels.items():
        assert row["users"] == value  # a closed loop's users: its concurrency
        assert row["stream_output_tokens_per_s_p50"] > 50  # one sequence at a time decodes at full speed
    assert [levels[v]["meets_per_user_tier"] for v in (1.0, 2.0, 3.0)] == [True, True, True]
    # at 6 in flight most streams wait ~2 s for their first token: the share is far below 0.95
    assert not levels[6.0]["meets_per_user_tier"] and levels[6.0]["per_user_attainment_ci_high"] < 0.95
    assert all(row["meets_sla"] for row in levels.values())  # the SLA alone never stops it

    summary = sweep_analysis.sweep_summary(sweep_analysis.sweep_levels(production, timings, spec), spec).to_pylist()
    (row,) = capacity_rows(spec, summary, record.get("search"))
    assert row["users_basis"] == CLOSED_LOOP_USERS
    assert (row["users_at_slo_tier"], row["users_at_slo_tier_ci_low"], row["users_at_slo_tier_ci_high"]) == (3, 3, 6)
    assert (row["tier_level_label"], row["tier_first_missed_level_label"]) == ("3 in flight", "6 in flight")
    assert not row["tier_bracket_closed"]  # 6 / 3 is wider than the default precision
    # a per-hour price: $3.60 per hour over 3 users; the bracket's other end over 6
    assert row["cost_per_user_hour_usd"] == pytest.approx(1.2)
    assert (row["cost_per_user_hour_usd_ci_low"], row["cost_per_user_hour_usd_ci_high"]) == pytest.approx((0.6, 1.2))
    figures = {f["metric"]: f for f in capacity_figures(spec, [row])}
    assert figures["users_at_slo_tier"]["measured"] == 3 and figures["users_at_slo_tier"]["n"] == 10
    assert figures["cost_per_user_hour_usd"]["load_level_label"] == "3 in flight"
