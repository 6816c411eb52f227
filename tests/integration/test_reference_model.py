"""The serving performance model on its virtual clock (exact, no sleeping), and the real HTTP
server following the very same model."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline.reference import ReferenceServer, ServingProfile, load_profile
from pipeline.reference.prefix_cache import block_hashes
from pipeline.reference.serving_model import EngineCore, PromptTooLong, Sequence, step_duration_ns
from pipeline.reference.simulation import (
    Arrival,
    bursty_mixed_arrivals,
    percentile,
    poisson_arrivals,
    simulate,
)
from pipeline.reference.timeline import read_timeline
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens, message_tokens

WINDOW_S = 60.0
RATES = [1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 20.0]


def _profile(**overrides: object) -> ServingProfile:
    fields = {
        "name": "t",
        "prefill_ms_per_token": 0.1,
        "decode_ms_per_token": 10.0,
        "decode_slowdown_per_seq": 0.05,
        "max_running_seqs": 8,
        "max_batch_tokens": 512,
        "step_overhead_ms": 1.0,
    }
    return ServingProfile(**{**fields, **overrides})


def _sweep(profile: ServingProfile) -> list[tuple[float, float, float]]:
    """(rate, output tokens/s, p99 TTFT ms) for Poisson 128-in/64-out load at each rate."""
    out = []
    for rate in RATES:
        sim = simulate(profile, poisson_arrivals(rate, WINDOW_S, 128, 64, seed=7), until_s=WINDOW_S)
        out.append((rate, sim.output_tokens_per_s(WINDOW_S), percentile(sim.ttft_ms(), 99)))
    return out


def test_poisson_sweep_saturates_and_p99_ttft_rises_steeply_past_the_knee() -> None:
    sweep = _sweep(load_profile("small-gpu"))
    throughput = [t for _, t, _ in sweep]
    p99 = [p for _, _, p in sweep]
    # below the knee, throughput follows the offered load (64 tokens per request)
    assert throughput[0] == pytest.approx(RATES[0] * 64, rel=0.15)
    assert throughput[2] == pytest.approx(RATES[2] * 64, rel=0.15)
    # past it, more load buys (almost) nothing: 12 → 20 req/s adds < 2 % throughput
    assert throughput[-1] < throughput[-2] * 1.02
    assert throughput[-1] < 0.5 * RATES[-1] * 64
    assert all(later >= earlier * 0.98 for earlier, later in zip(throughput, throughput[1:]))
    # the tail: flat-ish below the knee, then it explodes
    assert p99[2] < 3 * p99[0]
    assert p99[-1] > 50 * p99[0]
    knee = next(i for i, (rate, t, _) in enumerate(sweep) if t < 0.9 * rate * 64)
    assert p99[knee] > 5 * p99[knee - 1] or p99[knee + 1] > 5 * p99[knee - 1]


def test_bursty_mixed_lengths_yield_less_throughput_than_fixed_short_prompts_at_the_same_rate() -> None:
    profile = load_profile("small-gpu")
    rate = 4.0
    fixed = simulate(profile, poisson_arrivals(rate, WINDOW_S, 128, 64, seed=3), until_s=WINDOW_S)
    mixed_arrivals = bursty_mixed_arrivals(rate, WINDOW_S, seed=3, output_median=64)
    mixed = simulate(profile, mixed_arrivals, until_s=WINDOW_S)
    assert len(mixed_arrivals) == pytest.approx(rate * WINDOW_S, rel=0.2)  # same request rate
    assert mixed.output_tokens_per_s(WINDOW_S) < 0.6 * fixed.output_tokens_per_s(WINDOW_S)
    assert percentile(mixed.ttft_ms(), 99) > 10 * percentile(fixed.ttft_ms(), 99)


def test_same_load_same_timeline() -> None:
    profile = load_profile("small-gpu")
    load = bursty_mixed_arrivals(3.0, 20.0, seed=11, output_median=64)
    first, second = simulate(profile, load), simulate(profile, load)
    timeline = [(s.admitted_ns, s.first_token_ns, s.end_ns, s.preemptions) for s in first.requests]
    assert timeline == [(s.admitted_ns, s.first_token_ns, s.end_ns, s.preemptions) for s in second.requests]
    assert first.preemptions > 0  # this load overflows the 20k-token KV cache
    other = simulate(profile, bursty_mixed_arrivals(3.0, 20.0, seed=12, output_median=64))
    assert [s.end_ns for s in other.requests] != [s.end_ns for s in first.requests]


def test_prefill_is_chunked_by_the_token_budget_and_costs_per_token() -> None:
    profile = _profile(max_batch_tokens=256, prefill_ms_per_token=0.1, step_overhead_ms=1.0)
    core = EngineCore(profile)
    core.add(Sequence(0, prompt_tokens=1000, output_tokens=2, arrival_ns=0))
    steps = []
    now = 0
    while not core.idle:
        step = core.step(now)
        steps.append(step)
        now = step.end_ns
    assert [s.prefill_tokens for s in steps] == [256, 256, 256, 232, 0]
    assert [s.tokens for s in steps] == [[], [], [], [0], [0]]
    assert steps[0].duration_ns == round((1.0 + 256 * 0.1) * 1e6)
    # a lone request's TTFT grows with its prompt
    ttft = [simulate(profile, [Arrival(0, n, 1)]).ttft_ms()[0] for n in (100, 1000, 4000)]
    assert ttft[0] < ttft[1] < ttft[2]


def test_decode_step_time_grows_with_running_sequences() -> None:
    profile = _profile()
    assert step_duration_ns(profile, 0, 1) < step_duration_ns(profile, 0, 4) < step_duration_ns(profile, 0, 8)
    one = simulate(profile, [Arrival(0, 10, 50)])
    eight = simulate(profile, [Arrival(0, 10, 50) for _ in range(8)])
    assert max(eight.e2e_ms()) > 1.3 * one.e2e_ms()[0]


def test_decoding_takes_priority_and_prefill_gets_what_is_left_of_the_budget() -> None:
    profile = _profile(max_batch_tokens=64)
    core = EngineCore(profile)
    for i in range(4):
        core.add(Sequence(i, prompt_tokens=8, output_tokens=100, arrival_ns=0))
    step = core.step(0)
    assert step.prefill_tokens == 32 and step.tokens == [0, 1, 2, 3]
    core.add(Sequence(4, prompt_tokens=500, output_tokens=5, arrival_ns=step.end_ns))
    nxt = core.step(step.end_ns)
    assert nxt.decoding == 4 and nxt.prefill_tokens == 60


def test_kv_cache_preempts_the_newest_and_everything_still_finishes() -> None:
    profile = _profile(kv_cache_tokens=1200, kv_policy="preempt", max_batch_tokens=2048)
    load = [Arrival(i * 1000, 300, 200) for i in range(6)]
    sim = simulate(profile, load)
    assert sim.preemptions > 0
    assert all(s.generated == 200 and s.end_ns is not None for s in sim.requests)
    reserve = simulate(profile.model_copy(update={"kv_policy": "reserve"}), load)
    assert reserve.preemptions == 0
    assert all(s.generated == 200 for s in reserve.requests)


def test_kv_cache_is_never_overcommitted() -> None:
    for policy in ("preempt", "reserve"):
        profile = _profile(kv_cache_tokens=3000, kv_policy=policy, max_running_seqs=16)
        core = EngineCore(profile)
        load = bursty_mixed_arrivals(8.0, 5.0, seed=5, prompt_median=300, output_median=80, max_tokens=1400)
        for i, a in enumerate(load):
            core.add(Sequence(i, a.prompt_tokens, a.output_tokens, 0))
        now = 0
        while not core.idle:
            now = core.step(now).end_ns
            assert 0 <= core.kv_used <= 3000
        assert core.kv_used == 0


def test_a_prompt_that_can_never_fit_is_refused() -> None:
    core = EngineCore(_profile(kv_cache_tokens=1000))
    with pytest.raises(PromptTooLong):
        core.add(Sequence(0, prompt_tokens=990, output_tokens=20, arrival_ns=0))


def test_bundled_profiles_load_and_zero_is_the_instant_echo() -> None:
    assert load_profile("zero").instant
    for name in ("demo", "large-gpu", "small-gpu"):
        profile = load_profile(name)
        assert not profile.instant and profile.kv_cache_tokens and profile.max_batch_tokens


def test_profile_errors_name_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\nprefill_ms_per_token: 0\ndecode_ms_per_token: 1\n"
        "decode_slowdown_per_seq: 0\nmax_running_seqs: 0\nfaults: {rates: {boom: 0.5}}\n"
    )
    with pytest.raises(ValueError) as info:
        load_profile(str(path))
    assert "bad.yaml" in str(info.value) and "max_running_seqs" in str(info.value)
    assert "faults.rates" in str(info.value)


def test_http_server_follows_the_simulated_model_exactly(tmp_path: Path) -> None:
    """Replay real HTTP traffic, then feed the server's recorded virtual arrivals to `simulate`:
    every first token and end lands on the same virtual nanosecond."""
    profile = {
        "name": "http-check",
        "prefill_ms_per_token": 0.02,
        "decode_ms_per_token": 4.0,
        "decode_slowdown_per_seq": 0.1,
        "max_running_seqs": 4,
        "max_batch_tokens": 96,
        "step_overhead_ms": 0.5,
        "kv_cache_tokens": 520,
        "kv_policy": "preempt",
    }
    profile_path = tmp_path / "profile.yaml"
    profile_path.write_text(yaml.safe_dump(profile))
    plan = []
    for i in range(24):
        words = " ".join(["word"] * (10 + (i * 37) % 200))
        messages = [{"role": "user", "content": words}]
        plan.append(PlannedRequest(f"q{i}", i * 0.02, messages, 5 + (i * 13) % 40, count_message_tokens(messages)))
    timeline_path = tmp_path / "timeline.jsonl"
    with ReferenceServer(str(profile_path), timeline_path=timeline_path) as server:
        with Journal(tmp_path / "journal.jsonl") as journal:
            stats = run_replay(
                plan,
                Target("ref", server.base_url, "reference-model"),
                ReplaySettings(mode="trace", request_timeout_s=30),
                "run-1",
                journal,
            )
    assert stats.errors == 0
    rows = journal_to_table(tmp_path / "journal.jsonl").to_pylist()
    server_rows = sorted(read_timeline(timeline_path), key=lambda r: r["engine_seq"])
    assert sorted(r["request_id"] for r in server_rows) == sorted(p.request_id for p in plan)
    block_tokens = load_profile(str(profile_path)).kv_block_tokens
    hashes = {p.request_id: block_hashes(message_tokens(p.messages), block_tokens) for p in plan}
    sim = simulate(
        load_profile(str(profile_path)),
        [
            Arrival(r["arrival_virtual_ns"], r["prompt_tokens"], r["completion_tokens"], hashes[r["request_id"]])
            for r in server_rows
        ],
    )
    assert any(r["cached_tokens"] for r in server_rows)  # the prompts share prefixes: the cache is in play
    assert sim.preemptions > 0 and any(r["admitted_virtual_ns"] > r["arrival_virtual_ns"] for r in server_rows)
    assert [(s.first_token_ns, s.end_ns, s.preemptions) for s in sim.requests] == [
        (r["first_token_virtual_ns"], r["end_virtual_ns"], r["preemptions"]) for r in server_rows
    ]
    # and the model's timeline is what the client saw, causally: sent ≤ arrival ≤ first token ≤ end
    by_id = {r["request_id"]: r for r in rows}
    for r in server_rows:
        client = by_id[r["request_id"]]
        assert client["t_sent_ns"] <= r["arrival_ns"] <= r["first_token_ns"] <= client["t_first_token_ns"]
        assert r["first_token_ns"] <= r["end_ns"] <= client["t_end_ns"]
