"""The BR0.2 latency block (pipeline/pack/export/latency_stats.py): the pack's percentiles under BR's
names and units, a statistic only where BR's required mean is known over the figures' own n."""

from pathlib import Path

import yaml
from llmd_benchmark_report import BenchmarkReportV02

from pipeline.pack.export.benchmark_report import Stage, benchmark_report
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


# --- a whole document, without a pack ---------------------------------------------------------------

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "br0.2" / "inference_perf.v0_2.yaml"


def _document(tmp_path: Path) -> dict:
    stage = Stage(
        kind="sweep_level",
        basis="capacity_at_sla",
        label="sweep level 2×",
        total=91,
        failures=2,
        rates={"output_tokens_per_s": 400.0, "requests_per_s": 7.5},
        window_s=6.4,
        load_level=2.0,
        rate_qps=8.0,
        percentiles={"ttft_ms": {"p50": 15.0, "p99": 60.0, "n": 89}},
        moments={"ttft_ms": {"n": 89, "mean": 19.0, "min": 2.0, "max": 61.0}},
    )
    spec = {"candidates": [{"name": "fast", "model": "m", "base_url": "http://127.0.0.1:8100/v1"}]}
    return benchmark_report({"run_id": "r1", "spec_sha256": "ab" * 32}, spec, tmp_path, "fast", 1, stage)


def _merged(base, top):
    """`yq '. * load("top")'`: maps merged key by key, anything else replaced by top's."""
    if isinstance(base, dict) and isinstance(top, dict):
        return {**base, **{key: _merged(base.get(key), value) for key, value in top.items()}}
    return top


def test_a_document_is_valid_null_free_and_merges_with_inference_perfs(tmp_path):
    document = _document(tmp_path)
    BenchmarkReportV02.model_validate(document)
    assert "null" not in yaml.safe_dump(document)
    load = document["scenario"]["load"]
    assert load["standardized"]["rate_qps"] == 8.0 and load["standardized"]["stage"] == 1
    assert load["native"]["config"]["loadproof"] == {
        "stage": "sweep_level",
        "basis": "capacity_at_sla",
        "load_level": 2.0,
    }
    assert document["run"]["time"] == {"duration": "PT6.400S"}
    reference = yaml.safe_load(REFERENCE.read_text(encoding="utf-8"))
    BenchmarkReportV02.model_validate(reference)  # the pinned models read the upstream golden
    for merged in (_merged(document, reference), _merged(reference, document)):
        BenchmarkReportV02.model_validate(merged)
    # what the other producer measured and loadproof did not is kept beside loadproof's
    latency = _merged(document, reference)["results"]["request_performance"]["aggregate"]["latency"]
    assert set(latency) == {"time_to_first_token", "normalized_time_per_output_token", "request_latency"}
