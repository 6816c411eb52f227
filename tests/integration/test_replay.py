"""The replay engine over real HTTP on loopback: open loop, closed loop, typed errors, bounds; the
key ones on every API kind (`api`: chat, completions, responses) with the same assertions."""

import json
from pathlib import Path

import pytest

from pipeline.reference import ReferenceServer
from pipeline.reference.managed_server import free_port
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.replay.transport.api_kinds import completion_prompt
from pipeline.spec import Spec
from pipeline.tokens import count_message_tokens, count_tokens
from tests.support.specs import demo_spec_dict

MESSAGES = [{"role": "user", "content": "Why was my card declined at the shop today?"}]
PROMPT_TOKENS = count_message_tokens(MESSAGES)
APIS = ["chat", "completions", "responses"]
# the prompt tokens the server counts: a text completion's prompt is the messages as plain text, no template
SERVER_PROMPT_TOKENS = {"chat": PROMPT_TOKENS, "responses": PROMPT_TOKENS}
SERVER_PROMPT_TOKENS["completions"] = count_tokens(completion_prompt(MESSAGES))


def plan(n: int, spacing_s: float | None = 0.01, max_tokens: int = 8) -> list[PlannedRequest]:
    return [
        PlannedRequest(f"q{i}", None if spacing_s is None else i * spacing_s, MESSAGES, max_tokens, PROMPT_TOKENS)
        for i in range(n)
    ]


def replay(tmp_path: Path, requests, target: Target, settings: ReplaySettings):
    with Journal(tmp_path / "journal.jsonl") as journal:
        stats = run_replay(requests, target, settings, "run-1", journal)
    return stats, journal_to_table(journal.path).to_pylist()


@pytest.mark.parametrize("api", APIS)
def test_open_loop_records_one_ok_row_per_request_with_ordered_lifecycle(tmp_path: Path, zero_server, api: str):
    target = Target("ref", zero_server.base_url, "reference-model", api=api)
    stats, rows = replay(tmp_path, plan(20), target, ReplaySettings(mode="trace"))
    assert stats.sent == 20 and stats.errors == 0 and stats.unsent == 0
    assert sorted(r["request_id"] for r in rows) == sorted(f"q{i}" for i in range(20))
    for row in rows:
        assert row["status"] == "ok" and row["run_id"] == "run-1" and row["candidate"] == "ref"
        assert row["output_tokens"] == 8 and row["output_tokens_client"] == 8 and row["content_chunks"] == 8
        assert row["prompt_tokens"] == SERVER_PROMPT_TOKENS[api] and row["prompt_tokens_client"] == PROMPT_TOKENS
        assert row["usage_reported"] and row["usage_issue"] is None and row["finish_reason"] == "length"
        assert (
            row["t_sent_ns"]
            <= row["t_first_byte_ns"]
            <= row["t_first_token_ns"]
            <= row["t_last_token_ns"]
            <= row["t_end_ns"]
        )
        assert 0 <= row["ttft_ms"] <= row["e2e_ms"]
        assert len(row["itl_ms"]) == 7
        assert row["schedule_lag_ms"] >= 0


def test_open_loop_sends_in_planned_order(tmp_path: Path, zero_server):
    target = Target("ref", zero_server.base_url, "reference-model")
    _, rows = replay(tmp_path, plan(10, spacing_s=0.02), target, ReplaySettings(mode="trace"))
    by_send = [r["request_id"] for r in sorted(rows, key=lambda r: r["t_sent_ns"])]
    assert by_send == [f"q{i}" for i in range(10)]


@pytest.mark.parametrize("api", APIS)
def test_closed_loop_never_exceeds_its_concurrency(tmp_path: Path, zero_server, api: str):
    target = Target("ref", zero_server.base_url, "reference-model", api=api)
    stats, rows = replay(tmp_path, plan(30, spacing_s=None), target, ReplaySettings(mode="concurrency", concurrency=3))
    assert stats.sent == 30 and stats.errors == 0
    assert stats.peak_in_flight <= 3
    assert all(r["scheduled_offset_s"] is not None for r in rows)


def test_refused_connection_is_a_typed_error_not_an_exception(tmp_path: Path):
    target = Target("nobody", f"http://127.0.0.1:{free_port()}/v1", "reference-model")
    stats, rows = replay(tmp_path, plan(3), target, ReplaySettings(mode="trace", request_timeout_s=5))
    assert stats.errors == 3
    assert {r["error_type"] for r in rows} == {"connect_error"}
    assert all(r["status"] == "error" and r["ttft_ms"] is None for r in rows)


@pytest.mark.parametrize("api", APIS)
def test_unknown_model_is_recorded_as_model_not_found(tmp_path: Path, zero_server, api: str):
    target = Target("ref", zero_server.base_url, "no-such-model", api=api)
    _, rows = replay(tmp_path, plan(2), target, ReplaySettings(mode="trace", keep_server_error_text=True))
    assert {(r["error_type"], r["http_status"]) for r in rows} == {("model_not_found", 404)}
    assert "model_not_found" in rows[0]["error_message"]


def test_the_servers_error_text_is_kept_only_when_privacy_text_keeps_text(tmp_path: Path, zero_server):
    """A server's error body may quote the request back (a validation error echoing the input):
    unless privacy.text is keep, only its length is kept; the error type and status still say what failed."""
    target = Target("ref", zero_server.base_url, "no-such-model")
    _, rows = replay(tmp_path, plan(2), target, ReplaySettings(mode="trace"))
    assert {(r["error_type"], r["http_status"]) for r in rows} == {("model_not_found", 404)}
    assert all(r["error_message"].startswith("the server's error text withheld (privacy.text): ") for r in rows)
    assert all("no-such-model" not in r["error_message"] for r in rows)
    replay_spec = Spec.model_validate(demo_spec_dict()).workload.replay
    assert ReplaySettings.from_spec(replay_spec, "keep").keep_server_error_text
    assert not ReplaySettings.from_spec(replay_spec, "hash").keep_server_error_text
    assert not ReplaySettings.from_spec(replay_spec, "drop").keep_server_error_text


def test_time_bound_records_unsent_requests(tmp_path: Path, zero_server):
    target = Target("ref", zero_server.base_url, "reference-model")
    requests = plan(2, spacing_s=0.0) + [PlannedRequest("late", 30.0, MESSAGES, 4, PROMPT_TOKENS)]
    stats, rows = replay(tmp_path, requests, target, ReplaySettings(mode="trace", max_duration_s=1.0))
    late = next(r for r in rows if r["request_id"] == "late")
    assert stats.unsent == 1 and late["error_type"] == "not_sent" and late["t_sent_ns"] is None
    assert len(rows) == 3


def test_journal_survives_a_torn_last_line(tmp_path: Path, zero_server):
    target = Target("ref", zero_server.base_url, "reference-model")
    _, rows = replay(tmp_path, plan(4), target, ReplaySettings(mode="trace"))
    journal = tmp_path / "journal.jsonl"
    journal.write_text(journal.read_text() + '{"run_id": "run-1", "request_')  # killed mid-write
    assert journal_to_table(journal).num_rows == 4


def test_api_key_goes_only_into_the_authorization_header():
    target = Target("ref", "http://127.0.0.1:1/v1", "m", api_key="sk-secret-123")
    assert target.headers() == {"Authorization": "Bearer sk-secret-123"}
    assert "sk-secret-123" not in repr(target)


def test_open_loop_cap_limits_in_flight_requests(tmp_path: Path, zero_server):
    target = Target("ref", zero_server.base_url, "reference-model")
    stats, rows = replay(tmp_path, plan(40, spacing_s=0.0), target, ReplaySettings(mode="rate", max_concurrency=2))
    assert stats.sent == 40 and stats.errors == 0 and stats.peak_in_flight <= 2


def test_retries_are_recorded_attempt_by_attempt(tmp_path: Path):
    target = Target("nobody", f"http://127.0.0.1:{free_port()}/v1", "reference-model")
    settings = ReplaySettings(mode="trace", retries=2, retry_backoff_s=0.0, request_timeout_s=5)
    stats, rows = replay(tmp_path, plan(2), target, settings)
    assert stats.retries == 4
    for row in rows:
        attempts = json.loads(row["attempts_json"])
        assert row["retry_count"] == 2 and len(attempts) == 3
        assert [a["error_type"] for a in attempts] == ["connect_error"] * 3
        assert attempts[0]["sent_offset_ns"] == 0 and attempts[2]["sent_offset_ns"] >= attempts[1]["sent_offset_ns"]


def test_retries_are_off_by_default(tmp_path: Path):
    target = Target("nobody", f"http://127.0.0.1:{free_port()}/v1", "reference-model")
    _, rows = replay(tmp_path, plan(1), target, ReplaySettings(mode="trace"))
    assert rows[0]["retry_count"] == 0 and rows[0]["attempts_json"] is None


def test_calibration_replays_the_busiest_stretch_against_the_echo(tmp_path: Path):
    from pipeline.replay.client_validity.calibration import busiest_stretch, calibrate
    from pipeline.replay.client_validity.roofline import RooflineSearch

    requests = plan(5, spacing_s=1.0) + [
        PlannedRequest(f"burst{i}", 20.0 + i * 0.01, MESSAGES, 4, PROMPT_TOKENS) for i in range(30)
    ]
    stretch = busiest_stretch(requests, span_s=2.0)
    assert [r.request_id for r in stretch][:2] == ["calibration-burst0", "calibration-burst1"] and len(stretch) == 30
    assert stretch[0].scheduled_offset_s == 0.0
    figures = calibrate(
        requests,
        ReplaySettings(mode="trace"),
        tmp_path / "calibration.jsonl",
        echo_server=lambda: ReferenceServer("zero"),
        roofline=RooflineSearch(rates_per_s=(20.0, 40.0), step_s=0.25),
    )
    assert figures["requests"] == 30 and figures["errors"] == 0
    roofline = figures["roofline"]  # the ramp ran on loopback: the steps it tried, a rate, a share
    assert [step["rate_per_s"] for step in roofline["steps"]][:1] == [20.0] and roofline["events_per_request"] == 4
    assert all(step["requests"] == int(step["rate_per_s"] * 0.25) for step in roofline["steps"])
    if roofline["sends_per_s"] is not None:
        assert roofline["peak_sends_share"] == roofline["peak_demand_sends_per_s"] / roofline["sends_per_s"]
    assert figures["peak_rate_per_s"] > 50  # 30 requests 10 ms apart
    assert figures["schedule_lag_ms_p50"] <= figures["schedule_lag_ms_p99"]
    assert isinstance(figures["client_limited"], bool)


def test_min_tokens_and_ignore_eos_are_sent_only_when_planned():
    from pipeline.replay.reading.reply_reading import chat_body

    assert "min_tokens" not in chat_body("m", MESSAGES, 8) and "ignore_eos" not in chat_body("m", MESSAGES, 8)
    body = chat_body("m", MESSAGES, 8, min_tokens=8)
    assert body["min_tokens"] == 8 and body["ignore_eos"] is True


@pytest.mark.parametrize("api", APIS)
def test_reference_endpoint_accepts_min_tokens(tmp_path: Path, zero_server, api: str):
    target = Target("ref", zero_server.base_url, "reference-model", api=api)
    requests = [PlannedRequest("q0", 0.0, MESSAGES, 6, PROMPT_TOKENS, min_tokens=6)]
    stats, rows = replay(tmp_path, requests, target, ReplaySettings(mode="trace"))
    assert stats.errors == 0 and rows[0]["output_tokens"] == 6


def test_a_built_run_is_journalled_by_name_inside_what_runs_beside_it(tmp_path: Path, zero_server):
    from contextlib import contextmanager

    from pipeline.replay.pacing.runs import RunBuilder, execute

    runs = RunBuilder(
        Target("ref", zero_server.base_url, "reference-model"),
        ReplaySettings(mode="trace"),
        "run-b",
        lambda name: tmp_path / f"{name}.jsonl",
    )
    journal, seen = tmp_path / "ref.level.jsonl", []

    @contextmanager
    def beside():
        seen.append(("enter", journal.exists()))  # entered before the journal is opened
        yield
        seen.append(("leave", journal.read_bytes().count(b"\n")))  # left after every row is written

    run = runs.run("ref.level", plan(3), ReplaySettings(mode="concurrency", concurrency=2))
    assert (run.journal, run.run_id, run.settings.concurrency) == (journal, "run-b", 2)
    outcome = execute(run, beside())
    assert seen == [("enter", False), ("leave", 3)]
    rows = outcome.timings().to_pylist()
    assert outcome.journal == journal and outcome.totals()["sent"] == outcome.stats.sent == 3
    assert sorted(r["request_id"] for r in rows) == ["q0", "q1", "q2"]
    assert {(r["run_id"], r["candidate"], r["status"]) for r in rows} == {("run-b", "ref", "ok")}
    assert runs.run("default", plan(1)).settings == runs.settings
