"""The BR0.2 latency block (pipeline/pack/export/latency_stats.py): the pack's percentiles under BR's
names and units, a statistic only where BR's required mean is known over the figures' own n."""

from pipeline.pack.export.latency_stats import latency_block, percentiles_of_figures, percentiles_of_level


def test_percentiles_map_to_br_names_and_p999_is_p99p9():
    rows = [
        {"metric": "ttft_ms_p50", "measured": 10.0, "n": 3},
        {"metric": "ttft_ms_p999", "measured": 30.0, "n": 3},
        {"metric": "output_tokens_per_s", "measured": 5.0, "n": 3},
    ]
    moments = {"ttft_ms": {"n": 3, "mean": 20.0, "min": 10.0, "max": 30.0}}
    block = latency_block(percentiles_of_figures(rows), moments)
    assert block == {
        "time_to_first_token": {"units": "ms", "mean": 20.0, "min": 10.0, "p50": 10.0, "p99p9": 30.0, "max": 30.0}
    }


def test_no_statistic_without_a_mean_or_over_other_requests():
    rows = [{"metric": "tpot_ms_p50", "measured": 8.0, "n": 5}, {"metric": "e2e_ms_p50", "measured": 99.0, "n": 5}]
    moments = {"e2e_ms": {"n": 4, "mean": 90.0, "min": 1.0, "max": 200.0}}  # n differs from the figure's
    assert latency_block(percentiles_of_figures(rows), moments) == {}


def test_a_sweep_level_row_gives_its_percentile_columns_and_ttft_n():
    row = {"ttft_ms_p50": 1.0, "ttft_ms_p99": 2.0, "tpot_ms_p50": 3.0, "e2e_ms_p95": None, "latency_n": 7}
    assert percentiles_of_level(row) == {"ttft_ms": {"p50": 1.0, "p99": 2.0, "n": 7}, "tpot_ms": {"p50": 3.0}}
