"""Every fault of the reference endpoint reaches the replay as its own typed outcome, on each API
kind the replay speaks (chat, completions, responses: the same faults, the same records)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from pipeline.reference import ReferenceServer
from pipeline.reference.faults import FAULT_HEADER, billed_prompt_tokens
from pipeline.reference.timeline import read_timeline
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens
from tests.support.faults import EXPECTED

MESSAGES = [{"role": "user", "content": "Is my transfer to Spain still pending?"}]
MAX_TOKENS = 12

# fault → (status, error_type, usage_issue) as the replay records it


@pytest.fixture(scope="module", params=["zero", "engine"])
def server(request, tmp_path_factory) -> Iterator[ReferenceServer]:
    """The zero-delay echo, and a profile that runs the engine loop (faults on both paths)."""
    folder = tmp_path_factory.mktemp("faults")
    profile = "zero"
    if request.param == "engine":
        profile = str(folder / "engine.yaml")
        Path(profile).write_text(
            yaml.safe_dump(
                {
                    "name": "engine",
                    "prefill_ms_per_token": 0.001,
                    "decode_ms_per_token": 0.2,
                    "decode_slowdown_per_seq": 0.0,
                    "max_running_seqs": 8,
                    "kv_cache_tokens": 10000,
                }
            )
        )
    with ReferenceServer(profile, timeline_path=folder / "timeline.jsonl") as running:
        yield running


def _replay(tmp_path: Path, server: ReferenceServer, fault: str, n: int = 2, api: str = "chat") -> list[dict]:
    plan = [
        PlannedRequest(f"{fault}-{api}-{i}", i * 0.01, MESSAGES, MAX_TOKENS, count_message_tokens(MESSAGES))
        for i in range(n)
    ]
    target = Target("ref", server.base_url, "reference-model", extra_headers=((FAULT_HEADER, fault),), api=api)
    with Journal(tmp_path / "journal.jsonl") as journal:
        run_replay(plan, target, ReplaySettings(mode="trace", request_timeout_s=0.5), "run-f", journal)
    return journal_to_table(tmp_path / "journal.jsonl").to_pylist()


@pytest.mark.parametrize("api", ["chat", "completions", "responses"])
@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_reaches_the_replay_typed(tmp_path: Path, server: ReferenceServer, fault: str, api: str) -> None:
    rows = _replay(tmp_path, server, fault, api=api)
    status, error_type, usage_issue = EXPECTED[fault]
    assert [(r["status"], r["error_type"], r["usage_issue"]) for r in rows] == [(status, error_type, usage_issue)] * 2
    for row in rows:
        if status == "ok":
            assert row["ttft_ms"] is not None and row["output_tokens_client"] == MAX_TOKENS
        else:
            assert row["ttft_ms"] is None and row["e2e_ms"] is None
    if fault == "429":
        assert [r["retry_after_s"] for r in rows] == [1.0, 1.0] and {r["http_status"] for r in rows} == {429}
    if fault in ("cut", "malformed"):
        assert all(r["content_chunks"] == MAX_TOKENS // 2 for r in rows)
    if fault == "wrong_usage":
        assert all(r["output_tokens"] == MAX_TOKENS + 7 for r in rows)
    if fault == "no_usage":
        assert all(r["output_tokens"] == MAX_TOKENS and r["prompt_tokens"] is None for r in rows)
    logged = {r["request_id"]: r for r in read_timeline(server.timeline_path)}
    assert all(logged[r["request_id"]]["fault"] == fault for r in rows)
    counted = [logged[r["request_id"]]["prompt_tokens"] for r in rows]  # the server's own count
    billed = [billed_prompt_tokens(c, fault, 0.1) for c in counted]
    assert [r["prompt_tokens"] for r in rows] == (billed if status == "ok" and fault != "no_usage" else [None, None])
    assert (billed > counted) is (fault == "overbill")


def test_unknown_fault_header_is_a_400_in_openai_shape(server: ReferenceServer) -> None:
    response = httpx.post(
        f"{server.base_url}/chat/completions",
        headers={FAULT_HEADER: "meteor"},
        json={"model": "reference-model", "messages": MESSAGES},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "unknown_fault"


def _rates_run(tmp_path: Path, name: str) -> list[tuple[str, str | None]]:
    profile = tmp_path / "rates.yaml"
    profile.write_text(
        yaml.safe_dump(
            {
                "name": "rates",
                "prefill_ms_per_token": 0,
                "decode_ms_per_token": 0,
                "decode_slowdown_per_seq": 0,
                "max_running_seqs": 100,
                "seed": 5,
                "faults": {"rates": {"5xx": 0.2, "429": 0.2, "no_usage": 0.1}},
            }
        )
    )
    plan = [PlannedRequest(f"q{i}", None, MESSAGES, 4, count_message_tokens(MESSAGES)) for i in range(40)]
    with ReferenceServer(str(profile)) as server, Journal(tmp_path / f"{name}.jsonl") as journal:
        run_replay(
            plan,
            Target("ref", server.base_url, "reference-model"),
            ReplaySettings(mode="concurrency", concurrency=1),
            "run-r",
            journal,
        )
    rows = sorted(journal_to_table(journal.path).to_pylist(), key=lambda r: int(r["request_id"][1:]))
    return [(r["status"], r["error_type"] or r["usage_issue"]) for r in rows]


def test_fault_rates_from_the_profile_are_seeded(tmp_path: Path) -> None:
    first, second = _rates_run(tmp_path, "a"), _rates_run(tmp_path, "b")
    assert first == second
    kinds = {kind for _, kind in first}
    assert {"http_5xx", "http_429", "usage_missing", None} <= kinds
