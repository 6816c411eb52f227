"""A load sweep's tables from hand-made raw timings: per-level figures, the highest level still
meeting the SLA (every lower level meeting it too), its goodput and cost per useful decision."""

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.replay.conditions.sweep import load_levels, with_load_level
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

HOURLY = {"usd_per_hour": 3.6}
WINDOW_S = 9.5  # ten requests sent 1 s apart, 500 ms each: first send to last end
COST_PER_LEVEL = 3.6 * WINDOW_S / 3600


def sweep_spec(time_scales=(0.5, 0.25, 0.125), stop_after_miss: bool = True) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(
        warmup_s=0, cooldown_s=0, sweep={"time_scales": list(time_scales), "stop_after_miss": stop_after_miss}
    )
    data["sla"] = {"ttft_ms": 100, "min_attainment": 0.9, "max_error_rate": 0.2}
    data["candidates"] = [dict(data["candidates"][0], name="c", price=HOURLY)]
    return Spec.model_validate(data)


def level_rows(ttft_ms: int, errors: int = 0, prefix: str = "q") -> list[dict]:
    return [
        timing(f"{prefix}{i}", i * S, ttft_ms * MS, 500 * MS, error="http_5xx" if i < errors else None)
        for i in range(10)
    ]


def tables(tmp_path: Path, spec: Spec, production: list[dict], by_value: dict[float, list[dict]]) -> tuple[Path, Path]:
    levels = {level.value: level for level in load_levels(spec.workload.replay)}
    raw = with_load_level(pa.Table.from_pylist(production, schema=RAW_TIMING_RECORD_SCHEMA), levels[1.0])
    sweep = pa.concat_tables(
        [
            with_load_level(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), levels[value])
            for value, rows in by_value.items()
        ]
    )
    return write_parquet(raw, tmp_path / "raw.parquet"), write_parquet(sweep, tmp_path / "sweep.parquet")


def test_every_level_is_analysed_on_its_own(tmp_path: Path):
    spec = sweep_spec()
    raw, sweep = tables(
        tmp_path, spec, level_rows(10), {2.0: level_rows(20), 4.0: level_rows(900), 8.0: level_rows(30, errors=5)}
    )
    levels = {row["load_level"]: row for row in sweep_analysis.sweep_levels(raw, sweep, spec).to_pylist()}
    assert sorted(levels) == [1.0, 2.0, 4.0, 8.0]
    assert [levels[v]["load_level_label"] for v in sorted(levels)] == ["1×", "2×", "4×", "8×"]
    assert [levels[v]["production"] for v in sorted(levels)] == [True, False, False, False]
    # nothing mixes: each level's TTFT percentiles are its own requests' (one value per level)
    assert [levels[v]["ttft_ms_p99"] for v in sorted(levels)] == pytest.approx([10, 20, 900, 30])
    assert levels[2.0]["requests_in_window"] == 10 and levels[2.0]["window_s"] == pytest.approx(WINDOW_S)
    assert levels[2.0]["goodput_requests_per_s"] == pytest.approx(10 / WINDOW_S)
    assert levels[2.0]["cost_per_decision_usd"] == pytest.approx(COST_PER_LEVEL / 10)
    assert (levels[2.0]["meets_sla"], levels[2.0]["clearly_misses_sla"]) == (True, False)
    # 4×: no request within the 100 ms TTFT bound: attainment 0, its Wilson interval below 0.9
    assert levels[4.0]["sla_attainment"] == 0 and levels[4.0]["goodput_requests_per_s"] == 0
    assert (levels[4.0]["meets_sla"], levels[4.0]["clearly_misses_sla"]) == (False, True)
    assert levels[4.0]["cost_per_decision_usd"] is None  # no useful decision
    # 8×: half the requests failed: error rate 0.5 > 0.2, its interval [0.24, 0.76] wholly above
    assert levels[8.0]["error_rate"] == pytest.approx(0.5)
    assert (levels[8.0]["meets_sla"], levels[8.0]["clearly_misses_sla"]) == (False, True)


def test_the_summary_picks_the_highest_level_below_the_first_miss(tmp_path: Path):
    spec = sweep_spec()
    # 8× meets the SLA again (noise, or a cache warming up): a capacity needs every lighter load to hold
    raw, sweep = tables(
        tmp_path, spec, level_rows(10), {2.0: level_rows(20), 4.0: level_rows(900), 8.0: level_rows(30)}
    )
    levels = sweep_analysis.sweep_levels(raw, sweep, spec)
    (row,) = sweep_analysis.sweep_summary(levels, spec).to_pylist()
    assert row["load_levels"] == 4 and row["production_load_level"] == 1.0
    assert (row["max_sla_load_level"], row["max_sla_load_level_label"]) == (2.0, "2×")
    assert row["headroom_factor"] == pytest.approx(2.0)
    assert row["goodput_requests_per_s_at_max_sla_load"] == pytest.approx(10 / WINDOW_S)
    assert row["cost_per_decision_at_max_sla_load_usd"] == pytest.approx(COST_PER_LEVEL / 10)
    assert (row["first_missing_load_level"], row["first_missing_load_level_label"]) == (4.0, "4×")


def test_no_level_meeting_the_sla_leaves_the_summary_empty_handed(tmp_path: Path):
    spec = sweep_spec(time_scales=(0.5,))
    raw, sweep = tables(tmp_path, spec, level_rows(900), {2.0: level_rows(20)})
    (row,) = sweep_analysis.sweep_summary(sweep_analysis.sweep_levels(raw, sweep, spec), spec).to_pylist()
    assert row["max_sla_load_level"] is None and row["cost_per_decision_at_max_sla_load_usd"] is None
    assert row["first_missing_load_level"] == 1.0


def test_headline_figures_stay_those_of_the_production_level(tmp_path: Path):
    spec = sweep_spec()
    raw, _ = tables(tmp_path, spec, level_rows(10), {2.0: level_rows(900)})
    cost = analysis_tables.cost_per_decision(raw, spec).to_pylist()[0]
    assert cost["load_levels"] == 1
    assert cost["cost_per_decision_usd"] == pytest.approx(COST_PER_LEVEL / 10)
    assert "cost_per_decision_at_max_sla_load_usd" not in cost  # the sweep's, in sweep_summary


def test_the_early_stop_judges_a_level_from_its_own_rows(tmp_path: Path):
    spec = sweep_spec()
    levels = {level.value: level for level in load_levels(spec.workload.replay)}
    good = with_load_level(pa.Table.from_pylist(level_rows(20), schema=RAW_TIMING_RECORD_SCHEMA), levels[2.0])
    bad = with_load_level(pa.Table.from_pylist(level_rows(900), schema=RAW_TIMING_RECORD_SCHEMA), levels[4.0])
    assert not sweep_analysis.clearly_misses("c", levels[2.0], good, spec)
    assert sweep_analysis.clearly_misses("c", levels[4.0], bad, spec)
    assert not sweep_analysis.clearly_misses("another", levels[4.0], bad, spec)  # no rows: no verdict
    # the capacity search's three judgements, from the same columns
    assert sweep_analysis.judge_level("c", levels[2.0], good, spec) == "met"
    assert sweep_analysis.judge_level("c", levels[4.0], bad, spec) == "clearly_missed"
    assert sweep_analysis.judge_level("another", levels[4.0], bad, spec) == "inconclusive"


def test_the_checks_catch_an_inconsistent_summary_and_duplicated_levels():
    from pipeline.quality import rules

    levels = [
        {
            "candidate": "c",
            "load_level": 1.0,
            "load_level_label": "1×",
            "production": True,
            "meets_sla": True,
            "sla_attainment": 1.0,
            "error_rate": 0.0,
        },
        {
            "candidate": "c",
            "load_level": 2.0,
            "load_level_label": "2×",
            "production": False,
            "meets_sla": False,
            "sla_attainment": 0.5,
            "error_rate": 0.0,
        },
        {
            "candidate": "c",
            "load_level": 4.0,
            "load_level_label": "4×",
            "production": False,
            "meets_sla": True,
            "sla_attainment": 1.0,
            "error_rate": 0.0,
        },
    ]
    good = {"candidate": "c", "max_sla_load_level": 1.0, "first_missing_load_level": 2.0}
    assert rules.sweep_summary_consistent(levels, [good]).passed
    assert not rules.sweep_summary_consistent(levels, [dict(good, max_sla_load_level=4.0)]).passed  # 2× missed below it
    assert not rules.sweep_summary_consistent(levels, [dict(good, first_missing_load_level=4.0)]).passed  # 4× met
    assert rules.sweep_levels_complete(levels, ["c"], sweeping=True).passed
    assert not rules.sweep_levels_complete(levels + levels[:1], ["c"], sweeping=True).passed
    assert not rules.sweep_levels_complete(levels[1:], ["c"], sweeping=True).passed  # no production level
    assert not rules.sweep_levels_complete(levels, ["c"], sweeping=False).passed  # rows without a sweep
