"""The capacity rows (pipeline/analysis/sizing/capacity.py) from sweep_summary rows and the search's record,
and the asset check's rule that a search's bracket closed or its reason is recorded."""

import pytest

from pipeline.analysis.sizing.capacity import CAPACITY_COLUMNS, capacity_rows
from pipeline.pack.assemble.capacity import capacity_section
from pipeline.pack.document.section_parts import CapacityRow
from pipeline.quality import rules
from pipeline.spec import Spec
from tests.support.specs import demo_spec_dict


def spec_with(sweep: dict | None, mode: dict | None = None) -> Spec:
    data = demo_spec_dict()
    replay = data["workload"]["replay"]
    replay.update(mode or {})
    replay["sweep"] = sweep
    if sweep is None:
        replay.pop("sweep")
    return Spec.model_validate(data)


def summary(candidate="a", met=(4.0, "4×"), missed=(4.76, "4.76×"), levels=5) -> dict:
    return {
        "candidate": candidate,
        "load_levels": levels,
        "max_sla_load_level": met[0],
        "max_sla_load_level_label": met[1],
        "first_missing_load_level": missed[0],
        "first_missing_load_level_label": missed[1],
        "requests_per_s_at_max_sla_load": 14.0,
        "requests_per_s_at_max_sla_load_ci_low": 13.0,
        "requests_per_s_at_max_sla_load_ci_high": 15.0,
        "output_tokens_per_s_at_max_sla_load": 1200.0,
        "output_tokens_per_s_at_max_sla_load_ci_low": 1100.0,
        "output_tokens_per_s_at_max_sla_load_ci_high": 1300.0,
        "requests_in_window_at_max_sla_load": 80,
    }


SEARCH = {"search": {"precision": 0.10}}


def test_a_closed_bracket_gives_the_capacity_and_its_intervals():
    (row,) = capacity_rows(spec_with(SEARCH), [summary()], {"a": {"bracket_closed": True, "reason": "x"}})
    assert tuple(row) == CAPACITY_COLUMNS
    assert row["knob"] == "time_scale" and row["bracket_closed"]
    assert (row["max_sla_level"], row["first_missed_level"]) == (4.0, 4.76)
    assert (row["output_tokens_per_s"], row["ci_low"], row["ci_high"]) == (1200.0, 1100.0, 1300.0)
    assert (row["requests_per_s"], row["n"], row["levels_run"]) == (14.0, 80, 5)
    assert row["reason"] == "bracketed: met at 4×, first missed at 4.76× (ratio 1.19 ≤ 1.2)"


def test_an_open_bracket_says_why_the_search_stopped():
    record = {"bracket_closed": False, "reason": "time bound: max_search_s 60 s spent after 3 level(s) ..."}
    (row,) = capacity_rows(spec_with(SEARCH), [summary(missed=(8.0, "8×"))], {"a": record})
    assert not row["bracket_closed"] and row["reason"] == record["reason"]


@pytest.mark.parametrize(
    ("met", "missed", "reason"),
    [
        ((4.0, "4×"), (None, None), "level list: no level missed the SLA up to 4× (the capacity is a lower bound)"),
        ((None, None), (1.0, "1×"), "level list: no level met the SLA"),
        (
            (2.0, "2×"),
            (4.0, "4×"),
            "level list: met at 2×, first missed at 4×: wider than the precision (ratio 2, above 1.2)",
        ),
    ],
)
def test_a_level_list_says_in_its_own_words_why_its_bracket_is_open(met, missed, reason):
    (row,) = capacity_rows(spec_with({"time_scales": [0.5, 0.25]}), [summary(met=met, missed=missed)], None)
    assert not row["bracket_closed"] and row["reason"].startswith(reason)


def test_in_flight_levels_close_on_adjacent_integers():
    spec = spec_with({"search": {"precision": 0.01}}, {"mode": "concurrency", "concurrency": 2})
    (row,) = capacity_rows(spec, [summary(met=(5.0, "5 in flight"), missed=(6.0, "6 in flight"))], None)
    assert row["bracket_closed"] and row["knob"] == "concurrency"


def test_the_pack_section_is_typed_and_absent_without_a_sweep():
    lineage = {"sql": "sql/sweep_summary.sql", "inputs": [{"path": "data/raw_timings.parquet", "sha256": "0" * 64}]}
    rows = capacity_rows(spec_with(SEARCH), [summary()], {})  # data/capacity.parquet's (analysis made them)
    (row,) = capacity_section(spec_with(SEARCH), [{**rows[0], "run_id": "r"}], lineage)
    assert CapacityRow.model_validate(row).lineage.sql == "sql/sweep_summary.sql"
    assert capacity_section(spec_with(None), [], None) is None
    assert rules.capacity_rows_consistent(rows).passed
    wrong = {**rows[0], "first_missed_level": rows[0]["max_sla_level"], "ci_high": rows[0]["output_tokens_per_s"] / 2}
    assert len(rules.capacity_rows_consistent([wrong]).metadata["problems"]) == 2


def test_the_check_passes_a_closed_bracket_or_a_recorded_reason():
    replay = spec_with(SEARCH).workload.replay
    entries = [{"status": "reused"}, {"status": "replayed"}, {"status": "replayed"}]
    closed = {"candidates": {"a": entries}, "search": {"a": {"bracket_closed": True, "reason": "b", "levels_run": 2}}}
    assert rules.capacity_search_ended(closed, replay).passed
    reasoned = {**closed, "search": {"a": {"bracket_closed": False, "reason": "level bound", "levels_run": 2}}}
    assert rules.capacity_search_ended(reasoned, replay).passed
    silent = {**closed, "search": {"a": {"bracket_closed": False, "reason": " ", "levels_run": 2}}}
    assert not rules.capacity_search_ended(silent, replay).passed
    miscounted = {**closed, "search": {"a": {"bracket_closed": True, "reason": "b", "levels_run": 3}}}
    assert not rules.capacity_search_ended(miscounted, replay).passed
    assert not rules.capacity_search_ended({"candidates": {"a": entries}}, replay).passed  # no record
    assert not rules.capacity_search_ended(None, replay).passed
    assert rules.capacity_search_ended(None, spec_with({"time_scales": [0.5]}).workload.replay).passed  # no search


# --- below the production load: the fraction carried, the replicas, the cost at them -------------


def below(met=(0.31, "0.31×"), missed=(0.372, "0.372×"), cost=(0.002, 0.0015, 0.003)) -> dict:
    return summary(met=met, missed=missed) | {
        "production_load_level": 1.0,
        "cost_per_decision_at_max_sla_load_usd": cost[0],
        "cost_per_decision_at_max_sla_load_usd_ci_low": cost[1],
        "cost_per_decision_at_max_sla_load_usd_ci_high": cost[2],
    }


def with_price(price: dict) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"]["sweep"] = SEARCH
    data["candidates"] = [dict(data["candidates"][0], name="a", price=price)]
    return Spec.model_validate(data)


def test_below_the_load_the_fraction_carried_gives_the_replicas_and_the_hourly_cost_at_them():
    (row,) = capacity_rows(with_price({"usd_per_hour": 3.6}), [below()], {}, peak_to_mean=2.0)
    assert (row["capacity_fraction"], row["capacity_fraction_ci_low"]) == (0.31, 0.31)
    assert row["capacity_fraction_ci_high"] == pytest.approx(0.372)
    # ceil(1 / 0.31) = 4; the bracket's high end: ceil(1 / 0.372) = 3
    assert (row["replicas_at_sla"], row["replicas_at_sla_ci_low"], row["replicas_at_sla_ci_high"]) == (4, 3, 4)
    # the peak, twice the mean: ceil(2 / 0.31) = 7, ceil(2 / 0.372) = 6
    assert (row["replicas_at_sla_peak"], row["replicas_at_sla_peak_ci_low"]) == (7, 6)
    # a per-hour price scales with replicas: 4 replicas share the load one carries 0.31 of
    assert row["pricing"] == "hourly"
    assert row["cost_per_decision_at_sla_replicas_usd"] == pytest.approx(0.002 * 4 * 0.31)
    assert row["cost_per_decision_at_sla_replicas_usd_ci_high"] == pytest.approx(0.003 * 4 * 0.31)
    assert rules.capacity_rows_consistent([row]).passed


def test_a_per_token_price_does_not_scale_with_replicas():
    price = {"usd_per_million_input_tokens": 1.0, "usd_per_million_output_tokens": 2.0}
    (row,) = capacity_rows(with_price(price), [below()], {})
    assert row["pricing"] == "tokens" and row["replicas_at_sla"] == 4
    assert row["cost_per_decision_at_sla_replicas_usd"] == 0.002
    assert row["replicas_at_sla_peak"] is None  # no peak-to-mean ratio: no replicas for the peak


def test_above_the_load_one_replica_carries_it_and_an_open_bracket_has_no_high_end():
    (row,) = capacity_rows(with_price({"usd_per_hour": 3.6}), [below(met=(4.0, "4×"), missed=(None, None))], {})
    assert (row["capacity_fraction"], row["capacity_fraction_ci_high"]) == (4.0, None)
    assert (row["replicas_at_sla"], row["replicas_at_sla_ci_low"]) == (1, 1)
    assert row["cost_per_decision_at_sla_replicas_usd"] == pytest.approx(0.002 * 4.0)


def test_where_nothing_met_the_reason_gives_the_lowest_levels_figures():
    lowest = {
        "min_load_level": 1.0,
        "min_load_level_label": "1 in flight",
        "requests_in_window_at_min_load": 3,
        "peak_concurrency_at_min_load": 1,
        "ttft_ms_p50_at_min_load": 26.0,
        "e2e_ms_p50_at_min_load": 251.0,
        "sla_attainment_at_min_load": 0.0,
    }
    record = {"bracket_closed": False, "reason": "even one request at a time misses the SLA (at 1 in flight, ...)"}
    (row,) = capacity_rows(with_price({"usd_per_hour": 1.0}), [below(met=(None, None)) | lowest], {"a": record})
    assert row["capacity_fraction"] is None and row["replicas_at_sla"] is None
    assert row["reason"].startswith(record["reason"] + "; at the lowest level run, 1 in flight: 3 request(s)")
    assert "E2E p50 251 ms" in row["reason"] and "SLA attainment 0" in row["reason"]
