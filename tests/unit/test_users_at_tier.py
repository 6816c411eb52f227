"""Users at an SLO tier (`sla.per_user`, pipeline/analysis/sizing/users_at_tier.py): the per-user tier's
attainment per level (sql/per_user_tier.sql) on hand-built raw timings, the users at the tier and
their bracket from the levels (sql/sweep_levels.sql, sql/sweep_summary.sql), the cost per
user-hour, and the spec's errors. Real DuckDB."""

import re

import pyarrow as pa
import pytest

from pipeline.analysis.judge.figures import capacity_figures
from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.sizing.capacity import capacity_rows
from pipeline.analysis.sizing.users_at_tier import (
    CLOSED_LOOP_USERS,
    OPEN_LOOP_USERS,
    per_user_table,
    tier_columns,
    tier_note,
)
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.replay.conditions.sweep import LoadLevel, with_load_level
from pipeline.spec import Spec, SpecError, load_spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

TIER = {"output_tokens_per_s_min": 50, "ttft_ms_max": 1000}


def spec(per_user: dict | None = TIER, replay: dict | None = None, price: dict | None = None) -> Spec:
    data = demo_spec_dict()
    data["candidates"] = [dict(data["candidates"][0], name="c", price=price or {"usd_per_hour": 3.6})]
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0, **(replay or {}))
    data["sla"] = {"e2e_ms": 60_000, "min_attainment": 0.95, "max_error_rate": 0.5}
    if per_user is not None:
        data["sla"]["per_user"] = per_user
    return Spec.model_validate(data)


def table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA)


# --- the attainment per level: sql/per_user_tier.sql --------------------------------------------


def ten_streams() -> pa.Table:
    """Ten requests 1 s apart of 101 tokens: five with TTFT 100 ms and E2E 1.1 s (101 tokens/s after
    the first token), two with TTFT 1,500 ms (over the ceiling), one with E2E 2 s (53 tokens/s: just
    over the floor), one with E2E 4 s (26 tokens/s: under it) and one failed."""
    rows = [timing(f"ok{i}", S + i * S, 100 * MS, 1100 * MS, tokens=101) for i in range(5)]
    rows += [timing(f"slow-first{i}", S + (5 + i) * S, 1500 * MS, 2000 * MS, tokens=101) for i in range(2)]
    rows.append(timing("just", 8 * S, 100 * MS, 2000 * MS, tokens=101))
    rows.append(timing("crawl", 9 * S, 100 * MS, 4000 * MS, tokens=101))
    rows.append(timing("failed", 10 * S, 100 * MS, 2000 * MS, error="http_5xx"))
    return table(rows)


def test_a_stream_meets_the_tier_only_with_both_its_ttft_and_its_output_speed():
    (row,) = per_user_table(ten_streams(), spec()).to_pylist()
    # met: the five quick ones and the one at 101 / 1.9 s = 53 tokens/s; missed: two late first tokens,
    # the one at 101 / 3.9 s = 26 tokens/s, the failed one
    assert (row["streams"], row["streams_meeting_tier"]) == (10, 6)
    assert row["per_user_attainment"] == pytest.approx(0.6)
    assert row["per_user_attainment_ci_low"] < 0.6 < row["per_user_attainment_ci_high"]
    # the successful streams' speeds: 26, 53, 101 (× 5), 202 (× 2: 101 tokens in 0.5 s)
    assert row["stream_output_tokens_per_s_p50"] == pytest.approx(101)
    # Little's law over the window (first send 1 s to last end 13 s): the streams' seconds / 12 s
    assert row["mean_in_flight"] == pytest.approx((5 * 1.1 + 2 * 2 + 2 + 4 + 2) / 12)


def test_a_floor_just_above_a_streams_speed_misses_it():
    rows = per_user_table(ten_streams(), spec({"output_tokens_per_s_min": 54, "ttft_ms_max": 1000})).to_pylist()
    assert rows[0]["streams_meeting_tier"] == 5  # 101 / 1.9 s = 53.2 tokens/s < 54


def test_a_reply_in_one_chunk_is_judged_on_its_ttft_alone():
    rows = [timing("one", S, 300 * MS, 300 * MS, tokens=2), timing("late", 2 * S, 1200 * MS, 1200 * MS, tokens=2)]
    (row,) = per_user_table(table(rows), spec()).to_pylist()
    assert row["streams_meeting_tier"] == 1 and row["stream_output_tokens_per_s_p50"] is None


def test_without_a_tier_a_level_still_has_users_but_no_attainment():
    (row,) = per_user_table(ten_streams(), spec(None)).to_pylist()
    assert row["streams_meeting_tier"] is None and row["per_user_attainment"] is None
    assert row["per_user_attainment_ci_low"] is None and row["mean_in_flight"] > 0


# --- users at the tier from the levels: sql/sweep_levels.sql, sql/sweep_summary.sql ------------------


def level_rows(ttft_ms: int, prefix: str, count: int = 20) -> list[dict]:
    return [timing(f"{prefix}{i}", S + i * 500 * MS, ttft_ms * MS, 2000 * MS, tokens=101) for i in range(count)]


def closed_loop_sweep(ttfts: dict[float, int], the_spec: Spec):
    """A closed loop's levels (in flight) with each level's TTFT: production at 1 in flight."""
    production = with_load_level(table(level_rows(ttfts[1.0], "p")), LoadLevel(1.0, "1 in flight", 1.0, True))
    levels = [
        with_load_level(table(level_rows(ttft, f"l{value}-")), LoadLevel(value, f"{value:g} in flight", value))
        for value, ttft in sorted(ttfts.items())
        if value != 1.0
    ]
    sweep = pa.concat_tables(levels)
    the_levels = sweep_analysis.sweep_levels(production, sweep, the_spec)
    return the_levels.to_pylist(), sweep_analysis.sweep_summary(the_levels, the_spec).to_pylist()


CLOSED = {"mode": "concurrency", "concurrency": 1, "sweep": {"concurrencies": [2, 4, 8], "requests_per_level": 20}}


def test_users_at_the_tier_are_the_highest_level_met_below_the_first_missed():
    the_spec = spec(replay=CLOSED)
    # 8 in flight meets the tier again, but above a level that missed it: not counted
    levels, (summary,) = closed_loop_sweep({1.0: 100, 2.0: 200, 4.0: 1500, 8.0: 100}, the_spec)
    assert [(r["load_level"], r["users"], r["meets_per_user_tier"]) for r in levels] == [
        (1.0, 1.0, True),
        (2.0, 2.0, True),
        (4.0, 4.0, False),
        (8.0, 8.0, True),
    ]
    assert (summary["max_tier_load_level"], summary["first_tier_missing_load_level"]) == (2.0, 4.0)
    (row,) = capacity_rows(the_spec, [summary], None)
    assert row["users_basis"] == CLOSED_LOOP_USERS
    assert (row["users_at_slo_tier"], row["users_at_slo_tier_ci_low"], row["users_at_slo_tier_ci_high"]) == (2, 2, 4)
    assert not row["tier_bracket_closed"]  # 4 / 2 is wider than the precision
    # a per-hour price: the price per hour ÷ users, its bracket at the first level missed
    assert row["cost_per_user_hour_usd"] == pytest.approx(3.6 / 2)
    assert (row["cost_per_user_hour_usd_ci_low"], row["cost_per_user_hour_usd_ci_high"]) == pytest.approx((0.9, 1.8))
    figures = {f["metric"]: f for f in capacity_figures(the_spec, [row])}
    users = figures["users_at_slo_tier"]
    assert (users["measured"], users["load_level_label"], users["n"]) == (2, "2 in flight", 20)
    assert "bracket is not closed: met at 2 in flight, first missed at 4 in flight" in users["reason"]
    assert figures["cost_per_user_hour_usd"]["measured"] == pytest.approx(1.8)


def test_no_level_met_and_no_level_missed_say_so():
    the_spec = spec(replay=CLOSED)
    _, (summary,) = closed_loop_sweep({1.0: 1500, 2.0: 1500}, the_spec)
    (row,) = capacity_rows(the_spec, [summary], None)
    assert row["users_at_slo_tier"] is None
    (users, _) = capacity_figures(the_spec, [row])[-2:]
    assert users["measured"] is None and users["reason"].startswith("no load level met the SLO tier (tier: ≥ 50")
    _, (summary,) = closed_loop_sweep({1.0: 100, 2.0: 100}, the_spec)
    (row,) = capacity_rows(the_spec, [summary], None)
    assert (row["users_at_slo_tier"], row["users_at_slo_tier_ci_high"]) == (2, None)
    users = next(f for f in capacity_figures(the_spec, [row]) if f["metric"] == "users_at_slo_tier")
    assert users["reason"] == "no level missed the SLO tier up to 2 in flight (a lower bound)"


def test_an_open_loop_counts_its_users_by_littles_law_and_a_token_price_per_user_hour():
    price = {"usd_per_million_input_tokens": 1.0, "usd_per_million_output_tokens": 2.0}
    the_spec = spec(replay={"sweep": {"time_scales": [0.5]}}, price=price)
    production = with_load_level(table(level_rows(100, "p")), LoadLevel(1.0, "1×", 1.0, True))
    faster = with_load_level(table(level_rows(100, "f")), LoadLevel(2.0, "2×", 0.5))
    levels = sweep_analysis.sweep_levels(production, faster, the_spec)
    # 20 streams of 2 s, sent 0.5 s apart: window 1 s … 12.5 s, so 40 s of streams over 11.5 s
    first = levels.to_pylist()[0]
    assert first["users"] == pytest.approx(40 / 11.5) == first["mean_in_flight"]
    (summary,) = sweep_analysis.sweep_summary(levels, the_spec).to_pylist()
    (row,) = capacity_rows(the_spec, [summary], None)
    assert row["users_basis"] == OPEN_LOOP_USERS and row["users_at_slo_tier"] == pytest.approx(40 / 11.5)
    # 20 × (10 prompt × $1 + 101 output × $2) / 10⁶ over 11.5 s, per hour, per user
    per_hour = 20 * (10 * 1.0 + 101 * 2.0) / 1e6 / (11.5 / 3600)
    assert row["cost_per_user_hour_usd"] == pytest.approx(per_hour / (40 / 11.5))


def test_no_tier_no_figures():
    the_spec = spec(None, replay=CLOSED)
    _, (summary,) = closed_loop_sweep({1.0: 100, 2.0: 100}, the_spec)
    (row,) = capacity_rows(the_spec, [summary], None)
    assert row["users_at_slo_tier"] is None and row["users_basis"] == CLOSED_LOOP_USERS
    assert not [f for f in capacity_figures(the_spec, [row]) if f["metric"] == "users_at_slo_tier"]


# --- the spec ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("per_user", "message"),
    [
        ({"ttft_ms_max": 15000}, r"sla\.per_user\.output_tokens_per_s_min: Field required"),
        ({"output_tokens_per_s_min": 0, "ttft_ms_max": 15000}, r"output_tokens_per_s_min: Input should be greater"),
        ({"output_tokens_per_s_min": 30, "ttft_ms_max": 15000, "min_share": 1.5}, r"min_share: Input should be less"),
        ({"output_tokens_per_s_min": 30, "ttft_s_max": 15}, r"sla\.per_user\.ttft_s_max: Extra inputs"),
    ],
)
def test_a_bad_tier_is_an_error_naming_file_line_and_field(write_spec, per_user, message):
    data = demo_spec_dict()
    data["sla"]["per_user"] = per_user
    path = write_spec(data)
    with pytest.raises(SpecError, match=message) as error:
        load_spec(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.strip() == "per_user:")
    reported = int(re.search(re.escape(str(path)) + r":(\d+): sla\.per_user", str(error.value)).group(1))
    assert line <= reported <= line + len(per_user)  # the tier's line or the line of the field inside it


def test_a_missed_level_with_no_more_users_leaves_the_bracket_open_not_inverted():
    """The demo's budget-8b (4.5 % injected faults, an open loop): its first level missing the tier counted
    0.789 users by Little's law against 0.804 at the level met (failed requests end early). The bracket
    then bounds nothing above: open, never [0.804, 0.789]."""

    summary = {
        "max_tier_load_level": 1.41,
        "first_tier_missing_load_level": 1.68,
        "users_at_max_tier_load": 0.8037,
        "users_at_first_tier_miss": 0.7888,
        "cost_per_user_hour_at_max_tier_load_usd": 0.2,
        "cost_per_user_hour_at_first_tier_miss_usd": 0.21,
    }
    out = tier_columns(spec(replay={"mode": "trace"}), summary, 0.1)
    assert out["users_at_slo_tier"] == out["users_at_slo_tier_ci_low"] == 0.8037
    assert out["users_at_slo_tier_ci_high"] is None and out["cost_per_user_hour_usd_ci_low"] is None
    out |= {"tier_level_label": "1.41×", "tier_first_missed_level_label": "1.68×"}
    assert "held fewer users than 1.41× by Little's law" in tier_note(out, "users_at_slo_tier")["reason"]
    summary["users_at_first_tier_miss"] = 0.8037  # as many: a closed bracket, [0.8037, 0.8037]
    out = tier_columns(spec(replay={"mode": "trace"}), summary, 0.1)
    assert (out["users_at_slo_tier_ci_low"], out["users_at_slo_tier_ci_high"]) == (0.8037, 0.8037)
    summary["users_at_first_tier_miss"] = 0.95  # more users at the level missed: the bracket holds
    out = tier_columns(spec(replay={"mode": "trace"}), summary, 0.1)
    assert (out["users_at_slo_tier_ci_low"], out["users_at_slo_tier_ci_high"]) == (0.8037, 0.95)
