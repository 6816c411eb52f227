"""`workload.replay.until: resolved` over loopback (pipeline/replay/production/repeats.py with
analysis.repeated_figures.unresolved), without Dagster: a claim the zero-delay reference endpoint
meets by far is resolved after the second run, so the replay stops there (of at most four), and its
figure carries the sequential interval; a spent minute bound stops after the first run."""

from __future__ import annotations

from pathlib import Path

from pipeline.analysis.judge.repeated_figures import run_figures, unresolved, with_repeats
from pipeline.analysis.tabulate.repeats import run_timings
from pipeline.duck.catalog import REPO_QUERIES
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import RunBuilder
from pipeline.replay.production.repeats import merge_repeats, replay_runs
from pipeline.replay.production.shards import shards_for
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from tests.support.specs import demo_spec_dict


def spec_until(**until) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0, until={"max_runs": 4, **until})
    data["workload"]["replay"].pop("sweep")
    data["claim"]["figures"] = {"ttft_ms_p95": 60_000, "e2e_ms_p99": 60_000}
    data["claim"].pop("conditions", None)
    data["accuracy"] = None
    return Spec.model_validate(data)


def replay(spec: Spec, server, tmp_path: Path, lines: list[str]) -> list[dict]:
    plan = [PlannedRequest(f"q{i}", i * 0.01, [{"role": "user", "content": "hello"}], 8, 2) for i in range(30)]
    (shard,) = shards_for(1, tmp_path / "barrier")
    runs = RunBuilder(
        Target(spec.candidates[0].name, server.base_url, "reference-model"),
        ReplaySettings(mode="trace"),
        "r1",
        lambda name: tmp_path / f"{name}.jsonl",
    )
    return replay_runs(
        plan, runs, shard, spec.workload.replay, log=lines.append, unresolved=lambda t: unresolved(spec, t)
    )


def test_the_replay_stops_once_every_claimed_figure_is_resolved(zero_server, tmp_path: Path):
    spec, lines = spec_until(), []
    reports = replay(spec, zero_server, tmp_path, lines)
    assert [report["repeat"] for report in reports] == [0, 1]  # decisive at the first look, of at most 4
    assert "until resolved: after 2 runs, inconclusive: none" in lines
    timings, summary = merge_repeats(reports, spec.workload.replay)
    assert summary["repeats"] == 2
    figures = with_repeats(run_figures(spec, run_timings(timings, 0), None, REPO_QUERIES), spec, timings)
    claimed = {f["metric"]: f for f in figures if f.get("claimed") is not None and not f.get("not_judged")}
    assert set(claimed) == {"ttft_ms_p95", "e2e_ms_p99"}
    for figure in claimed.values():
        assert figure["verdict"] == "holds"
        assert figure["interval_method"].startswith("until resolved: the t-interval over the first 2 of 2 runs")
        assert figure["ci_low"] <= figure["measured"] <= figure["ci_high"]


def test_a_spent_minute_bound_stops_after_the_first_run(zero_server, tmp_path: Path):
    spec, lines = spec_until(max_minutes=1e-9), []
    reports = replay(spec, zero_server, tmp_path, lines)
    assert [report["repeat"] for report in reports] == [0]
    assert any(line.startswith("until resolved:") and "max_minutes" in line for line in lines)
