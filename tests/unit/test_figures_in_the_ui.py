"""What the Dagster UI shows of a partition's figures, from the figures table's rows the pack renders:
the verdicts, one per candidate × metric × basis (issue 29: the vendor-conditions verdict overwrote the
production-load one, so the UI said "not reproduced" where the pack said "holds"), and every figure
with its basis, value, interval, n, verdict and lineage hashes."""

from pipeline.analysis.judge.figures_table import (
    claimed_verdicts,
    figure_key,
    figures_from_table,
    figures_markdown,
    figures_table,
)


def figure(metric: str, basis: str, verdict: str | None, claimed: float | None = 250.0, **extra) -> dict:
    return {
        "candidate": "fastserve-8b",
        "metric": metric,
        "basis": basis,
        "unit": "ms",
        "claimed": claimed,
        "measured": 40.0,
        "ci_low": 35.6,
        "ci_high": 44.0,
        "n": 186,
        "verdict": verdict,
        "query": "latency_percentiles",
    } | extra


def test_each_basis_keeps_its_own_verdict():
    table = figures_table(
        [
            figure("ttft_ms_p95", "production_load", "holds"),
            figure("ttft_ms_p95", "vendor_conditions", "not reproduced", arm="a_vendor_conditions"),
            figure("ttft_ms_p95", "capacity_at_sla", "inconclusive"),
            figure("ttft_ms_p50", "production_load", None, claimed=None),  # not claimed: no verdict to show
        ]
    )
    expected = {
        "fastserve-8b/ttft_ms_p95/production_load": "holds",
        "fastserve-8b/ttft_ms_p95/vendor_conditions": "not reproduced",
        "fastserve-8b/ttft_ms_p95/capacity_at_sla": "inconclusive",
    }
    assert claimed_verdicts(table.to_pylist()) == expected
    # the pack's figures are the table's rows read back: the same verdicts under the same keys
    assert claimed_verdicts(figures_from_table(table)) == expected


def test_a_repeated_replays_runs_are_not_figures_of_their_own():
    combined = figure("ttft_ms_p95", "production_load", "holds")
    run = {**combined, "repeat": 1, "verdict": "not reproduced"}
    assert claimed_verdicts([combined, run]) == {"fastserve-8b/ttft_ms_p95/production_load": "holds"}


def test_a_figure_written_before_bases_is_at_the_production_load():
    assert figure_key({"candidate": "c", "metric": "m"}) == "c/m/production_load"


def test_the_markdown_shows_every_figure_with_its_basis_interval_n_verdict_and_input_hashes():
    inputs = {
        "latency_percentiles": [("data/raw_timings.parquet", "ab" * 32), ("data/itl_histogram.parquet", "cd" * 32)]
    }
    table = figures_table(
        [
            figure("ttft_ms_p95", "production_load", "holds"),
            figure("ttft_ms_p95", "vendor_conditions", "not reproduced", measured=300.0, ci_high=None),
        ],
        inputs,
    )
    run = {**table.to_pylist()[0], "repeat": 0}  # a run's row is the figure's, not a figure of its own
    lines = figures_markdown([*table.to_pylist(), run]).splitlines()
    assert lines[0] == "| candidate | metric | basis | claimed | measured | interval | n | verdict | lineage |"
    assert len(lines) == 4
    production, vendor = lines[2], lines[3]
    assert production.startswith(
        "| fastserve-8b | ttft_ms_p95 | production_load | 250 | 40 ms | 35.6 – 44 | 186 | holds |"
    )
    lineage = (
        f"sql/latency_percentiles.sql; data/raw_timings.parquet {'ab' * 32}; data/itl_histogram.parquet {'cd' * 32}"
    )
    assert production.endswith(f"| {lineage} |")
    assert "| vendor_conditions | 250 | 300 ms | 35.6 – — | 186 | not reproduced |" in vendor
