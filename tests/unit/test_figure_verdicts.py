"""The verdicts the Dagster UI shows beside a pack: one per candidate × metric × basis, read from the
figures table's rows the pack renders (issue 29: the vendor-conditions verdict overwrote the
production-load one, so the UI said "not reproduced" where the pack said "holds")."""

from pipeline.analysis.figures_table import claimed_verdicts, figure_key, figures_from_table, figures_table


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
        **extra,
    }


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
