"""A repeated replay over loopback (`pipeline/replay/production/repeats.py`), without Dagster: two runs of a
small plan against the zero-delay reference endpoint, merged, analysed per run and combined
(`pipeline/analysis/judge/repeated_figures.py`). The whole graph with repeats: tests/e2e/test_repeats.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pipeline.analysis.judge.figures_table import figures_from_table, figures_table
from pipeline.analysis.judge.repeated_figures import run_figures, with_repeats
from pipeline.analysis.tabulate.repeats import run_timings
from pipeline.duck.catalog import REPO_QUERIES
from pipeline.pack.document.parts import Figure
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import RunBuilder
from pipeline.replay.production.repeats import merge_repeats, replay_runs
from pipeline.replay.production.shards import shards_for
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from tests.support.specs import demo_spec_dict

REPEATS = 2


def test_two_runs_send_every_request_twice_and_each_figure_spans_both_runs(zero_server, tmp_path: Path):
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0, repeats=REPEATS)
    data["workload"]["replay"].pop("sweep")
    spec = Spec.model_validate(data)
    plan = [PlannedRequest(f"q{i}", i * 0.02, [{"role": "user", "content": "hello"}], 8, 2) for i in range(40)]
    (shard,) = shards_for(1, tmp_path / "barrier")
    reports = replay_runs(
        plan,
        RunBuilder(
            Target(spec.candidates[0].name, zero_server.base_url, "reference-model"),
            ReplaySettings(mode="trace"),
            "r1",
            lambda name: tmp_path / f"{name}.jsonl",
        ),
        shard,
        spec.workload.replay,
        log=lambda line: None,
    )
    timings, summary = merge_repeats(reports, spec.workload.replay)
    assert Counter(zip(timings.column("request_id").to_pylist(), timings.column("repeat").to_pylist())) == {
        (item.request_id, repeat): 1 for item in plan for repeat in range(REPEATS)
    }
    assert summary["planned"] == REPEATS * len(plan) and [run["repeat"] for run in summary["runs"]] == [0, 1]

    once = run_figures(spec, run_timings(timings, 0), None, REPO_QUERIES)  # what the first run alone reports
    figures = with_repeats(once, spec, timings)
    assert [f["metric"] for f in figures] == [f["metric"] for f in once]
    for figure in figures:
        runs = figure["repeats"]["runs"]
        assert [run["repeat"] for run in runs] == [0, 1], figure["metric"]
        assert figure["n"] == sum(run["n"] for run in runs)
        for run in runs:
            # an open end (None) is wider than any: it stays open when any run's is
            if run["ci_low"] is not None and figure["ci_low"] is not None:
                assert figure["ci_low"] <= run["ci_low"], figure["metric"]
            if run["ci_high"] is not None and figure["ci_high"] is not None:
                assert figure["ci_high"] >= run["ci_high"], figure["metric"]
            assert run["ci_low"] is not None or figure["ci_low"] is None, figure["metric"]
            assert run["ci_high"] is not None or figure["ci_high"] is None, figure["metric"]

    # data/figures.parquet holds each run as a row of its own; the pack reads the figure back whole
    table = figures_table(figures)
    assert table.num_rows == len(figures) * (1 + REPEATS)
    lineage = {"sql": "sql/x.sql", "inputs": [{"path": "data/raw_timings.parquet", "sha256": "0" * 64}]}
    for figure, back in zip(figures, figures_from_table(table), strict=True):
        assert back["repeats"] == {**figure["repeats"], "runs": back["repeats"]["runs"]}
        assert [(r["repeat"], r["measured"], r["ci_low"], r["n"]) for r in back["repeats"]["runs"]] == [
            (r["repeat"], r["measured"], r["ci_low"], r["n"]) for r in figure["repeats"]["runs"]
        ]
        Figure.model_validate({**{k: v for k, v in back.items() if k != "query"}, "lineage": lineage})
