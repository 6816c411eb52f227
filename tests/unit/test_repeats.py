"""A repeated replay's figures (`pipeline/analysis/judge/repeated_figures.py`): the verdict interval over the runs, and
the runs told apart in the raw timings (`pipeline/analysis/tabulate/repeats.py`). The whole graph with
repeats: tests/e2e/test_repeats.py."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import t as student_t

from pipeline.analysis.judge.repeated_figures import combined
from pipeline.analysis.tabulate.repeats import first_run, run_numbers, run_timings


def figure(metric: str = "ttft_ms_p95", claimed: float | None = 250.0) -> dict:
    return {"candidate": "c", "metric": metric, "claimed": claimed, "measured": None, "ci_low": None, "ci_high": None}


def run(repeat: int, value: float | None, low: float | None, high: float | None, n: int = 100) -> dict:
    return {"repeat": repeat, "measured": value, "ci_low": low, "ci_high": high, "n": n, "verdict": None}


def test_two_runs_give_the_union_of_their_intervals_and_hold_only_if_each_does():
    runs = [run(0, 200.0, 190.0, 210.0), run(1, 240.0, 230.0, 260.0)]
    out = combined(figure(), runs, 0.95)
    assert (out["measured"], out["ci_low"], out["ci_high"], out["n"]) == (220.0, 190.0, 260.0, 200)
    assert out["verdict"] == "inconclusive"  # run 1 alone straddles the claim of 250
    assert out["repeats"]["between_run_range"] == [200.0, 240.0]
    assert out["repeats"]["between_run_sd"] == pytest.approx(math.sqrt(800))
    assert "union" in out["repeats"]["interval_method"] and "t-interval" not in out["repeats"]["interval_method"]


def test_three_scattered_runs_widen_the_union_to_the_t_interval_over_their_values():
    runs = [run(0, 100.0, 98.0, 102.0), run(1, 110.0, 108.0, 112.0), run(2, 120.0, 118.0, 122.0)]
    out = combined(figure(claimed=None), runs, 0.95)
    half = student_t.ppf(0.975, 2) * 10.0 / math.sqrt(3)  # sd of 100, 110, 120 is 10
    assert out["ci_low"] == pytest.approx(110.0 - half) and out["ci_high"] == pytest.approx(110.0 + half)
    assert all(out["ci_low"] <= r["ci_low"] and out["ci_high"] >= r["ci_high"] for r in runs)
    assert "t-interval" in out["repeats"]["interval_method"]


def test_runs_that_agree_keep_the_union_never_narrower_than_one_run():
    runs = [run(k, 100.0, 90.0, 110.0) for k in range(3)]  # sd 0: the t-interval is a point
    out = combined(figure(), runs, 0.95)
    assert (out["ci_low"], out["ci_high"]) == (90.0, 110.0)
    assert out["verdict"] == "holds"


def test_an_open_end_in_any_run_stays_open_and_proportions_stay_in_bounds():
    out = combined(figure(), [run(0, 200.0, 190.0, None), run(1, 205.0, 195.0, 215.0)], 0.95)
    assert out["ci_high"] is None and out["verdict"] == "inconclusive"
    share = combined(
        figure("sla_attainment", 0.9),
        [run(k, v, v - 0.01, min(v + 0.01, 1.0)) for k, v in enumerate((0.9, 1.0, 0.95))],
        0.95,
    )
    assert share["ci_low"] >= 0.0 and share["ci_high"] <= 1.0


def test_early_stopping_needs_every_run_long_enough():
    item = figure() | {"early_stopping": {"confidence": 0.975, "min_samples_to_hold": 72, "long_enough": True}}
    out = combined(item, [run(0, 1.0, 0.5, 1.5, n=100), run(1, 1.0, 0.5, 1.5, n=50)], 0.95)
    assert out["early_stopping"]["long_enough"] is False
    assert combined(item, [run(0, 1.0, 0.5, 1.5, n=100), run(1, 1.0, 0.5, 1.5, n=80)], 0.95)["early_stopping"][
        "long_enough"
    ]
    # each run worth half its requests (design effect 2): 50 and 40 < 72
    dependent = [run(0, 1.0, 0.5, 1.5, n=100) | {"design_effect": 2.0}, run(1, 1.0, 0.5, 1.5, n=80)]
    dependent[1]["design_effect"] = 2.0
    out = combined(item, dependent, 0.95)
    assert out["early_stopping"]["effective_samples"] == 40.0 and out["early_stopping"]["long_enough"] is False
    # an open end in a run leaves the figure's interval open: never long enough, whatever the count
    assert not combined(item, [run(0, 1.0, 0.5, None, n=500), run(1, 1.0, 0.5, 1.5, n=500)], 0.95)["early_stopping"][
        "long_enough"
    ]


def test_runs_are_told_apart_and_old_raw_timings_are_one_run(tmp_path: Path):
    table = pa.table({"request_id": ["a", "b", "a", "b"], "repeat": pa.array([0, 0, 1, 1], pa.int64())})
    path = tmp_path / "raw_timings.parquet"
    pq.write_table(table, path)
    assert run_numbers(path) == [0, 1]
    assert run_timings(path, 1).column("request_id").to_pylist() == ["a", "b"]
    assert isinstance(first_run(path), pa.Table) and first_run(path).num_rows == 2
    once = tmp_path / "once.parquet"
    pq.write_table(table.filter(pa.array([True, True, False, False])), once)
    assert first_run(once) == once  # one run: the file itself, as before repeats
    old = tmp_path / "old.parquet"
    pq.write_table(pa.table({"request_id": ["a"]}), old)  # written before the repeat column
    assert run_numbers(old) == [0] and first_run(old) == old


def test_the_spec_bounds_repeats_and_refuses_them_with_mixed_accuracy():
    from pydantic import ValidationError

    from pipeline.spec import Spec
    from tests.support.specs import demo_spec_dict

    assert Spec.model_validate(demo_spec_dict()).workload.replay.repeats == 1  # the default: a replay done once
    data = demo_spec_dict()
    data["workload"]["replay"]["repeats"] = 21
    with pytest.raises(ValidationError, match="less than or equal to 20"):
        Spec.model_validate(data)
    data["workload"]["replay"]["repeats"] = 2
    data["accuracy"]["mode"] = "mixed"
    with pytest.raises(ValidationError, match="needs accuracy.mode separate"):
        Spec.model_validate(data)
