"""The steady-state tests on synthetic span series (seeded): a flat series passes, a ramp fails the
trend test, a step fails the level-shift test, a leading ramp is trimmed, and a window too short
(or too sparse) has no steady window; then through the SQL on raw timings."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import rankdata

from pipeline.analysis.judge.figures import figure_rows, headline_figures
from pipeline.analysis.statistics import steady_state
from pipeline.analysis.statistics.steady_state import (
    FAILS,
    LEVEL_SHIFT,
    PASSES,
    TREND,
    judge_window,
    mann_kendall,
    pettitt,
)
from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.pack.render import charts
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

BINS = steady_state.STEADY_BINS


def noisy(level: float, seed: int, n: int = BINS, sd: float = 0.01) -> np.ndarray:
    return level * (1 + np.random.default_rng(seed).normal(0, sd, n))


def spans(tpot, ttft=None, window_s: float = 100.0, e2e_ms_p90: float = 1000.0) -> list[dict]:
    span_ns = int(window_s * 1e9 / len(tpot))
    return [
        {
            "candidate": "c",
            "load_level": None,
            "bin": i,
            "replay_start_ns": 0,
            "window_start_ns": 0,
            "window_end_ns": int(window_s * 1e9),
            "bin_start_ns": i * span_ns,
            "requests": 10,
            "requests_ok": 10,
            "tpot_ms_p50": float(tpot[i]),
            "ttft_ms_p50": float(ttft[i]) if ttft is not None else 50.0,
            "e2e_ms_p90": e2e_ms_p90,
        }
        for i in range(len(tpot))
    ]


def decisions(row: dict, series: str = "tpot_ms_p50", pass_number: int = 1) -> dict[str, str]:
    return {
        t["test"]: t["decision"]
        for t in json.loads(row["tests"])
        if t["series"] == series and t["pass_number"] == pass_number
    }


def test_a_flat_series_passes_both_tests():
    row = judge_window(spans(noisy(10, seed=1)))
    assert decisions(row) == {TREND: PASSES, LEVEL_SHIFT: PASSES}
    assert row["steady_window"] and row["reason"] is None and row["trimmed_bins"] == 0
    assert (row["window_start_ns"], row["window_end_ns"]) == (0, 100 * 10**9)  # the configured window, kept


def test_a_ramp_fails_the_trend_test():
    tau, p, drift = mann_kendall(np.linspace(10, 20, BINS) + noisy(0.5, seed=2))
    assert tau > 0.9 and p < 0.001 and drift > 0.5
    row = judge_window(spans(np.linspace(10, 20, BINS)))
    assert decisions(row)[TREND] == FAILS
    assert not row["steady_window"] and "trend (Mann-Kendall) on tpot" in row["reason"]


def test_a_step_fails_the_level_shift_test():
    step = np.concatenate([noisy(10, seed=3, n=BINS - 7), noisy(14, seed=4, n=7)])  # a step up in the second half
    k, p, at, shift = pettitt(step)
    assert at == BINS - 7 and p < 0.001 and shift == pytest.approx(0.4, abs=0.05)
    row = judge_window(spans(step))
    assert decisions(row)[LEVEL_SHIFT] == FAILS
    assert not row["steady_window"] and "second half" in row["reason"]
    # the figures stay over the configured window, flagged
    assert row["window_start_ns"] == row["configured_start_ns"]


@pytest.mark.parametrize("n", [5, 10, 40])
def test_the_level_shift_tests_p_value_is_the_one_every_pack_was_made_with(n: int):
    # a pack's p-values were made (and are re-computed by verify) from one seeded `permutation` call
    # after another, each permutation's K on its own; pettitt draws them at once and must match
    values = noisy(10, seed=n, n=n)
    k, p, _, _ = pettitt(values)
    ranks = rankdata(values)
    rng = np.random.default_rng(steady_state.PERMUTATION_SEED)
    ks = [steady_state._pettitt_k(rng.permutation(ranks))[0] for _ in range(steady_state.PERMUTATIONS)]
    assert 0.01 < p < 1  # a p-value the draws decide, not one every stream would give
    assert p == (1 + sum(1 for one in ks if one >= k - 1e-9)) / (1 + steady_state.PERMUTATIONS)


def test_a_leading_ramp_is_trimmed_and_the_rest_tested_again():
    ramp = np.concatenate([np.linspace(20, 12, 7), noisy(10, seed=5, n=BINS - 7)])  # seven spans of ramp
    row = judge_window(spans(ramp))
    assert row["trimmed_bins"] == 7 and row["steady_window"]
    assert decisions(row, pass_number=2) == {TREND: PASSES, LEVEL_SHIFT: PASSES}
    assert row["window_start_ns"] == 7 * 100 * 10**9 // BINS and "leading ramp" in row["reason"]


def test_a_window_shorter_than_five_e2e_p90s_has_no_steady_window():
    row = judge_window(spans(noisy(10, seed=6), window_s=20.0, e2e_ms_p90=5000.0))
    assert decisions(row) == {TREND: PASSES, LEVEL_SHIFT: PASSES}
    assert not row["steady_window"] and row["min_length_s"] == pytest.approx(25.0)
    assert "shorter than its minimum length" in row["reason"] and "5 × E2E p90" in row["min_length_term"]


def test_a_noisy_level_needs_the_precision_bound():
    row = judge_window(spans(noisy(10, seed=7, sd=0.2), window_s=100.0, e2e_ms_p90=10.0))
    assert row["precision_bins"] > BINS and row["min_length_term"].startswith("precision")
    assert not row["steady_window"]


def test_too_few_spans_with_a_reply_is_no_steady_window():
    rows = spans(noisy(10, seed=8))
    for span in rows[: BINS - steady_state.MIN_BINS + 1]:
        span.update(requests_ok=0, tpot_ms_p50=None, ttft_ms_p50=None)
    row = judge_window(rows)
    assert not row["steady_window"] and "fewer than" in row["reason"] and json.loads(row["tests"]) == []


def spec(**replay) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0, **replay)
    data["candidates"][0]["name"] = "c"
    data["claim"]["figures"] = {"tpot_ms_p50": 10.0, "sla_attainment": 0.5}
    data["sla"] = {"e2e_ms": 60_000}
    return Spec.model_validate(data)


def raw(tmp_path: Path, tpot_ms) -> Path:
    """One request a second; request i streams 100 tokens at `tpot_ms(i)` ms each."""
    rows = [timing(f"r{i}", i * S, 20 * MS, 20 * MS + int(99 * tpot_ms(i) * MS)) for i in range(120)]
    return write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")


def test_the_throughput_table_carries_the_window_and_a_steady_run_keeps_it(tmp_path: Path):
    analysed = tables.analyse_all(raw(tmp_path, lambda i: 5.0), spec())
    row = analysed["throughput"].to_pylist()[0]
    assert row["steady_window"] is True and row["steady_reason"] is None
    assert row["steady_window_start_s"] == row["configured_window_start_s"] == 0.0
    assert {t["test"] for t in json.loads(row["steady_tests"])} == {TREND, LEVEL_SHIFT}
    figure = next(f for f in headline_figures(spec(), figure_rows(analysed)) if f["metric"] == "tpot_ms_p50")
    assert figure["verdict"] == "holds" and "no_steady_window" not in figure


def test_a_drifting_run_has_no_steady_window_and_no_verdict_holds(tmp_path: Path):
    analysed = tables.analyse_all(raw(tmp_path, lambda i: 5.0 + i / 80), spec())  # TPOT climbs 5 → 6.5 ms
    row = analysed["throughput"].to_pylist()[0]
    assert row["steady_window"] is False and "trend (Mann-Kendall)" in row["steady_reason"]
    figure = next(f for f in headline_figures(spec(), figure_rows(analysed)) if f["metric"] == "sla_attainment")
    # every request met the SLA: the whole interval is above the 0.5 claim (it would hold), but no
    # steady state was measured
    assert figure["ci_low"] > 0.5
    assert figure["verdict"] == "inconclusive" and figure["no_steady_window"] == row["steady_reason"]


def test_the_throughput_timeline_shades_each_window_labelled_with_its_tests(tmp_path: Path):
    analysed = tables.analyse_all(raw(tmp_path, lambda i: 5.0), spec())
    rows = analysed["throughput"].to_pylist()
    spans = charts.steady_spans(rows)
    ((label, (start, end, solid)),) = spans.items()
    assert label.startswith("c steady window\ntrend p ") and "level shift p " in label and "(TPOT / TTFT)" in label
    assert (start, end, solid) == (rows[0]["steady_window_start_s"], rows[0]["steady_window_end_s"], True)
    buckets = analysed["throughput_buckets"].to_pylist()
    shaded = charts.throughput_charts(buckets, rows)["throughput_timeline"]
    assert shaded is not None and shaded != charts.throughput_charts(buckets)["throughput_timeline"]


def test_a_window_that_holds_no_request_has_no_rate_and_no_interval(tmp_path: Path):
    # five requests 1 s apart, 3 s of warm-up and 3 s of cool-down: the window holds none of them.
    # DuckDB's greatest() skips a NULL, so a clamp written with it gave each absent rate a low end
    # of 0 and the absent attainment a batch interval of [0, 1]
    rows = [timing(f"r{i}", i * S, 20 * MS, 500 * MS) for i in range(5)]
    path = write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=3, cooldown_s=3)
    data["candidates"][0]["name"] = "c"
    (row,) = tables.throughput(path, Spec.model_validate(data)).to_pylist()
    assert row["requests_in_window"] == 0 and row["window_s"] == 0.0
    rates = ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput_requests_per_s")
    assert {suffix: {row[f"{rate}{suffix}"] for rate in rates} for suffix in ("", "_ci_low", "_ci_high")} == {
        "": {None},
        "_ci_low": {None},
        "_ci_high": {None},
    }
    attainment = ("sla_attainment", "sla_attainment_batch_ci_low", "sla_attainment_batch_ci_high")
    assert [row[name] for name in attainment] == [None, None, None]


def test_replies_in_one_batch_have_a_reasoning_figure_but_no_interval_of_it(tmp_path: Path):
    # one reply: its 4 reasoning tokens of 100 are the figure; a batch-means interval needs two
    # batches, so it has none (not [0, —] and [0, 1] as the greatest()/least() clamps gave)
    rows = [timing("r0", 0, 20 * MS, 500 * MS, reasoning=4)]
    path = write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")
    (row,) = tables.throughput(path, spec()).to_pylist()
    assert (row["reasoning_tokens_per_request"], row["reasoning_share"]) == (4.0, 0.04)
    intervals = ("reasoning_tokens_per_request", "reasoning_share")
    assert [row[f"{name}{end}"] for name in intervals for end in ("_ci_low", "_ci_high")] == [None] * 4
