"""Sessions end to end: session ids ingested, turns and think times planned, and each turn replayed
over real HTTP after the previous reply + the think time, carrying the conversation so far."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.plan.replay_plan import planned_requests
from pipeline.plan.sessions import own_messages, session_summary
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.spec import SpecError, load_spec
from pipeline.spec.workload import Replay, Sample
from pipeline.tokens import count_message_tokens
from pipeline.workload.logs import ingest_log
from tests.support.session_logs import (
    EXPECTED_THINK_S,
    SESSIONS,
    SYSTEM,
    session_log_lines,
    session_plan,
    write_session_log,
)
from tests.support.specs import demo_spec_dict

TIME_SCALE = 0.02  # think times of 1-3 s become 20-60 ms


def _replay(tmp_path: Path, plan, target: Target, settings: ReplaySettings) -> dict[str, dict]:
    with Journal(tmp_path / "journal.jsonl") as journal:
        stats = run_replay(planned_requests(plan), target, settings, "run-s", journal)
    rows = journal_to_table(journal.path).to_pylist()
    assert stats.planned == plan.num_rows == len(rows)
    return {row["request_id"]: row for row in rows}


# --- ingest -----------------------------------------------------------------------------------


def test_openai_log_session_ids_from_top_level_metadata_and_request_metadata(tmp_path: Path):
    rows = ingest_log(write_session_log(tmp_path), "openai_jsonl").rows.to_pylist()
    by_id = {row["request_id"]: row["session_id"] for row in rows}
    assert by_id["a1"] == "s-a" and by_id["b2"] == "s-b" and by_id["c3"] == "7"
    assert by_id["x1"] is None and by_id["x4"] is None


def test_a_session_id_that_is_not_a_string_or_integer_is_quarantined(tmp_path: Path):
    lines = session_log_lines()
    lines[0]["session_id"] = {"nested": True}
    result = ingest_log(write_session_log(tmp_path, lines), "openai_jsonl")
    reject = result.rejects.to_pylist()[0]
    assert reject["source_line"] == 1 and "field session_id (or conversation_id)" in reject["reason"]


def test_csv_session_column_is_mapped_and_mooncake_has_none(tmp_path: Path):
    csv_log = tmp_path / "log.csv"
    csv_log.write_text("ts,in,out,conv\n2026-11-02T14:00:00Z,10,5,chat-1\n2026-11-02T14:00:01Z,12,5,\n")
    columns = {"arrival": "ts", "prompt_tokens": "in", "output_tokens": "out", "session_id": "conv"}
    rows = ingest_log(csv_log, "csv", columns=columns).rows.to_pylist()
    assert [row["session_id"] for row in rows] == ["chat-1", None]
    mooncake = tmp_path / "trace.jsonl"
    mooncake.write_text('{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}\n')
    assert ingest_log(mooncake, "mooncake_jsonl").rows.column("session_id").to_pylist() == [None]


# --- plan -------------------------------------------------------------------------------------


def test_plan_chains_turns_in_arrival_order_with_logged_think_times(tmp_path: Path):
    table = session_plan(tmp_path, Replay(mode="trace", time_scale=TIME_SCALE))
    by_id = {row["request_id"]: row for row in table.to_pylist()}
    for session, turns in SESSIONS.items():
        assert [by_id[t]["session_turn"] for t in turns] == [1, 2, 3]
        assert {by_id[t]["session_id"] for t in turns} == {session}
        assert by_id[turns[0]]["follows_request_id"] is None and by_id[turns[0]]["think_time_s"] is None
        assert [by_id[t]["follows_request_id"] for t in turns[1:]] == turns[:2]
    for request_id, think in EXPECTED_THINK_S.items():
        assert by_id[request_id]["think_time_logged_s"] == pytest.approx(think)
        assert by_id[request_id]["think_time_s"] == pytest.approx(think * TIME_SCALE)
    assert all(by_id[f"x{i}"]["session_id"] is None for i in range(1, 5))
    assert session_summary(table) == {
        "sessions": 3,
        "session_requests": 9,
        "chained_turns": 6,
        "chains_started_mid_session": 0,
    }


def test_later_turns_carry_only_their_own_new_messages(tmp_path: Path):
    by_id = {row["request_id"]: row for row in session_plan(tmp_path, Replay(mode="trace")).to_pylist()}
    messages = {key: json.loads(row["messages_json"]) for key, row in by_id.items()}
    assert messages["a1"][0] == SYSTEM  # a chain's first turn: as logged
    assert messages["a2"] == [{"role": "user", "content": "It happened again today."}]  # logged reply left out
    assert messages["b2"] == [{"role": "user", "content": "The app says my PIN is locked."}]  # system not repeated
    assert messages["c3"] == [{"role": "user", "content": "Thanks, and to India?"}]


def test_sessions_off_plans_every_request_on_its_own(tmp_path: Path):
    plan = session_plan(tmp_path, Replay(mode="trace", sessions="off"))
    assert set(plan.column("follows_request_id").to_pylist()) == {None}
    a3 = next(row for row in plan.to_pylist() if row["request_id"] == "a3")
    assert len(json.loads(a3["messages_json"])) == 6  # the whole logged conversation


def test_a_window_that_cuts_a_session_starts_its_chain_at_the_first_sampled_turn(tmp_path: Path):
    window = Sample(mode="explicit_window", start_offset_s=2.0, window_s=60)
    table = session_plan(tmp_path, Replay(mode="trace"), window)
    by_id = {row["request_id"]: row for row in table.to_pylist()}
    # a2, b2 and c2 start their chains (their first turns are before the window)
    assert session_summary(table) == {
        "sessions": 3,
        "session_requests": 6,
        "chained_turns": 3,
        "chains_started_mid_session": 3,
    }
    assert "a1" not in by_id and "b1" not in by_id and "c1" not in by_id
    a2 = by_id["a2"]
    assert a2["session_turn"] == 2 and a2["follows_request_id"] is None and a2["think_time_s"] is None
    assert len(json.loads(a2["messages_json"])) == 4  # sent as logged, with its logged context
    assert by_id["a3"]["follows_request_id"] == "a2"


def test_rate_mode_paces_chain_starts_and_leaves_later_turns_without_offset(tmp_path: Path):
    plan = session_plan(tmp_path, Replay(mode="rate", rate_per_s=50, arrival="constant")).to_pylist()
    leads = [row["scheduled_offset_s"] for row in plan if row["follows_request_id"] is None]
    assert leads == pytest.approx([i / 50 for i in range(7)])  # 3 chain starts + 4 session-less
    assert all(row["scheduled_offset_s"] is None for row in plan if row["follows_request_id"] is not None)


def test_own_messages_of_a_log_that_repeats_nothing():
    first = [SYSTEM, {"role": "user", "content": "one"}]
    assert own_messages(first, [{"role": "user", "content": "two"}], first) == [{"role": "user", "content": "two"}]


# --- replay over HTTP -------------------------------------------------------------------------


def _assert_chained(rows: dict[str, dict], plan_rows: dict[str, dict]) -> None:
    for turns in SESSIONS.values():
        for k, request_id in enumerate(turns):
            row, planned = rows[request_id], plan_rows[request_id]
            assert row["status"] == "ok" and row["session_turn"] == k + 1
            own = count_message_tokens(json.loads(planned["messages_json"]))
            if k == 0:
                assert row["prompt_tokens"] == own and row["session_history_turns"] == 0
                continue
            previous = rows[turns[k - 1]]
            think_ns = round(planned["think_time_s"] * 1e9)
            # scheduled at the previous reply's end + the think time, sent no earlier
            assert row["t_scheduled_ns"] == previous["t_end_ns"] + think_ns
            assert row["t_sent_ns"] >= previous["t_end_ns"] + think_ns
            assert row["follows_request_id"] == turns[k - 1] and row["session_history_turns"] == k
            # the body carried the previous exchanges: the server counted the previous prompt,
            # the reply received (as an assistant message: its tokens + a role marker) and the
            # turn's own messages
            assert row["prompt_tokens"] == previous["prompt_tokens"] + previous["output_tokens_client"] + 1 + own
            assert row["prompt_tokens_client"] == row["prompt_tokens"]


def test_trace_replay_sends_each_turn_after_the_previous_reply_plus_think_time_with_history(
    tmp_path: Path, zero_server
):
    plan = session_plan(tmp_path, Replay(mode="trace", time_scale=TIME_SCALE))
    target = Target("ref", zero_server.base_url, "reference-model")
    rows = _replay(tmp_path, plan, target, ReplaySettings(mode="trace"))
    plan_rows = {row["request_id"]: row for row in plan.to_pylist()}
    _assert_chained(rows, plan_rows)
    for request_id in ("x1", "x2", "x3", "x4"):  # session-less: at their own planned offsets
        row = rows[request_id]
        assert row["status"] == "ok" and row["session_id"] is None and row["schedule_lag_ms"] >= 0
        assert row["scheduled_offset_s"] == pytest.approx(plan_rows[request_id]["scheduled_offset_s"])
    for turns in SESSIONS.values():  # a later turn's offset: its previous turn's end + think, on the replay's clock
        first = rows[turns[0]]
        origin_ns = first["t_scheduled_ns"] - round(first["scheduled_offset_s"] * 1e9)
        for request_id in turns[1:]:
            assert rows[request_id]["scheduled_offset_s"] == pytest.approx(
                (rows[request_id]["t_scheduled_ns"] - origin_ns) / 1e9, abs=1e-6
            )


def test_closed_loop_runs_each_chain_in_one_worker_with_history(tmp_path: Path, zero_server):
    plan = session_plan(tmp_path, Replay(mode="concurrency", concurrency=2, time_scale=TIME_SCALE))
    thinks = plan.column("think_time_s").to_pylist()
    # concurrency mode waits the logged think time as it is (time_scale is for traces)
    assert thinks == plan.column("think_time_logged_s").to_pylist()
    fast = _with_think_times(plan, [None if t is None else t * TIME_SCALE for t in thinks])  # keep the test short
    target = Target("ref", zero_server.base_url, "reference-model")
    stats_rows = _replay(tmp_path, fast, target, ReplaySettings(mode="concurrency", concurrency=2))
    _assert_chained(stats_rows, {row["request_id"]: row for row in fast.to_pylist()})


def _with_think_times(plan, values: list[float | None]):
    return plan.set_column(plan.schema.get_field_index("think_time_s"), "think_time_s", pa.array(values, pa.float64()))


def test_a_turn_after_a_failed_turn_is_still_sent_without_the_failed_exchange(tmp_path: Path, zero_server):
    plan = session_plan(tmp_path, Replay(mode="trace", time_scale=TIME_SCALE))
    failing = Target("ref", zero_server.base_url, "reference-model", extra_headers=(("x-reference-fault", "5xx"),))
    rows = _replay(tmp_path, plan, failing, ReplaySettings(mode="trace"))
    for turns in SESSIONS.values():
        for k, request_id in enumerate(turns):
            row = rows[request_id]
            assert row["error_type"] == "http_5xx" and row["t_sent_ns"] is not None
            assert row["session_history_turns"] == 0  # nothing succeeded, nothing carried
            if k:
                previous = rows[turns[k - 1]]
                assert row["t_sent_ns"] >= previous["t_end_ns"] + round(row["think_time_s"] * 1e9)


def test_turns_due_after_the_time_bound_are_recorded_not_sent(tmp_path: Path, zero_server):
    plan = session_plan(tmp_path, Replay(mode="trace", time_scale=TIME_SCALE))
    # an hour of thinking: past any bound
    long_think = _with_think_times(
        plan, [None if t is None else 3600.0 for t in plan.column("think_time_s").to_pylist()]
    )
    target = Target("ref", zero_server.base_url, "reference-model")
    rows = _replay(tmp_path, long_think, target, ReplaySettings(mode="trace", max_duration_s=5))
    for turns in SESSIONS.values():
        assert rows[turns[0]]["status"] == "ok"
        second, third = rows[turns[1]], rows[turns[2]]
        assert second["error_type"] == third["error_type"] == "not_sent"
        assert second["t_sent_ns"] is None and second["session_turn"] == 2 and third["session_turn"] == 3
        assert second["scheduled_offset_s"] > 3600 * 0.99


# --- spec -------------------------------------------------------------------------------------


def test_spec_sessions_setting_is_validated_with_file_and_line(write_spec):
    data = demo_spec_dict()
    data["workload"]["replay"]["sessions"] = "sometimes"
    path = write_spec(data)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if "sessions: sometimes" in text)
    assert f"{path}:{line}: workload.replay.sessions: Input should be 'auto' or 'off'" in str(caught.value)
    data["workload"]["replay"]["sessions"] = "off"
    assert load_spec(write_spec(data, "off.yaml")).spec.workload.replay.sessions == "off"


# --- profile ----------------------------------------------------------------------------------


def test_profile_counts_sessions_turns_and_think_times(tmp_path: Path):
    from pipeline.spec.workload import LogSource
    from pipeline.workload.logs.ingest import ingest
    from pipeline.workload.profile import profile_requests

    rows = tmp_path / "canonical.parquet"
    ingest(
        LogSource(path=str(write_session_log(tmp_path)), format="openai_jsonl"), tmp_path, rows, tmp_path / "q.parquet"
    )
    profile = profile_requests(rows)
    assert (profile["sessions"], profile["multi_turn_sessions"]) == (3, 3)
    assert profile["share_requests_in_sessions"] == pytest.approx(9 / 13)
    assert (profile["session_turns_p50"], profile["session_turns_max"]) == (3, 3)
    thinks = sorted(EXPECTED_THINK_S.values())  # 1.0, 1.8, 2.0, 2.3, 2.5, 3.1
    assert profile["session_think_time_s_p50"] == pytest.approx((thinks[2] + thinks[3]) / 2)
    assert profile["session_think_time_s_p90"] == pytest.approx(thinks[4] + 0.5 * (thinks[5] - thinks[4]))
