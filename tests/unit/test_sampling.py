"""production_sample: window modes, stratified draws, and the representativeness tests."""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipeline.spec.workload import Sample
from pipeline.workload.logs import ingest_log
from pipeline.workload.sampling import draw_sample, representativeness
from tests.support.canonical_logs import T0, write_canonical
from tests.support.shared_data import shared_data

AZURE_DIR = shared_data("azure_llm_2023_conv")


def test_busiest_window_keeps_offsets_within_the_window(tmp_path: Path):
    logs = write_canonical(tmp_path / "logs.parquet", [0.0, 10.0, 10.5, 11.0, 30.0])
    busiest, window = draw_sample(logs, Sample(window_s=2.0, max_requests=100))
    assert busiest.column("source_line").to_pylist() == [2, 3, 4]
    assert busiest.column("window_offset_s").to_pylist() == [0.0, 0.5, 1.0]
    assert window.window_s == 2.0
    explicit, _ = draw_sample(logs, Sample(mode="explicit_window", window_s=40.0, start_offset_s=5.0, max_requests=2))
    assert explicit.column("source_line").to_pylist() == [2, 3]
    assert explicit.column("window_offset_s").to_pylist() == [5.0, 5.5]


def test_window_is_half_open_at_its_end(tmp_path: Path):
    """[t, t + W): a request exactly W after the start belongs to the next window."""
    logs = write_canonical(tmp_path / "logs.parquet", [0.0, 1.0, 2.0, 5.0, 5.5, 7.0])
    sample, _ = draw_sample(logs, Sample(window_s=2.0))
    # every window holds 2 (from 5.0 it would hold 3 if 7.0 counted); ties go to the earliest
    assert sample.column("source_line").to_pylist() == [1, 2]


def test_explicit_absolute_bounds_and_named_peak_hour(tmp_path: Path):
    logs = write_canonical(tmp_path / "logs.parquet", [0, 10, 3599, 3600, 3700, 7300])
    bounded, _ = draw_sample(
        logs, Sample(mode="explicit_window", start_at="2026-11-02T14:00:05Z", end_at="2026-11-02T15:00:00Z")
    )
    assert bounded.column("source_line").to_pylist() == [2, 3]
    named, window = draw_sample(logs, Sample(mode="peak_hour", hour="2026-11-02T15:00:00Z"))
    assert named.column("source_line").to_pylist() == [4, 5] and window.window_s == 3600
    busiest, window = draw_sample(logs, Sample(mode="peak_hour"))
    assert busiest.column("source_line").to_pylist() == [1, 2, 3]
    assert window.as_dict()["window_start"] == T0.isoformat()


def _brute_force_busiest(offsets_us: list[int], window_us: int) -> tuple[int, int]:
    """Independent reference: for every start, count [t, t + W) by bisection; earliest best."""
    best = (-1, 0)
    for t in sorted(set(offsets_us)):
        count = bisect.bisect_left(offsets_us, t + window_us) - bisect.bisect_left(offsets_us, t)
        if count > best[0]:
            best = (count, t)
    return best


@pytest.mark.skipif(not AZURE_DIR.is_dir(), reason="../shared/data/azure_llm_2023_conv is absent")
def test_busiest_minute_of_the_real_azure_hour_matches_a_brute_force_count(tmp_path: Path):
    rows, _ = ingest_log(AZURE_DIR / "*.csv", "azure_csv").tables()
    logs = tmp_path / "azure.parquet"
    pq.write_table(rows, logs)
    arrivals = sorted(int(t.timestamp() * 1_000_000) for t in rows.column("arrival_at").to_pylist())
    expected_count, expected_start = _brute_force_busiest(arrivals, 60_000_000)
    sample, window = draw_sample(logs, Sample(window_s=60, max_requests=100_000))
    assert sample.num_rows == expected_count
    assert window.start_us == expected_start
    assert (
        min(sample.column("window_offset_s").to_pylist()) >= 0
        and max(sample.column("window_offset_s").to_pylist()) < 60
    )


def test_stratified_draw_is_seeded_proportional_and_covers_every_stratum(tmp_path: Path):
    n = 1000
    rng = np.random.default_rng(7)
    prompts = rng.choice([50, 300, 3000], size=n, p=[0.6, 0.3, 0.1]).tolist()
    tenants = rng.choice(["a", "b", "rare"], size=n, p=[0.7, 0.298, 0.002]).tolist()
    logs = write_canonical(
        tmp_path / "logs.parquet", [i * 0.1 for i in range(n)], prompt_tokens=prompts, tenant=tenants
    )
    spec = Sample(
        mode="stratified", max_requests=100, strata=["prompt_length", "tenant"], length_bins=[128, 512, 2048], seed=3
    )
    first, window = draw_sample(logs, spec)
    again, _ = draw_sample(logs, spec)
    other, _ = draw_sample(logs, spec.model_copy(update={"seed": 4}))
    assert first.column("request_id").to_pylist() == again.column("request_id").to_pylist()
    assert first.column("request_id").to_pylist() != other.column("request_id").to_pylist()
    population = {}
    for p, t in zip(prompts, tenants):
        key = (p, t)
        population[key] = population.get(key, 0) + 1
    drawn = {}
    for row in first.to_pylist():
        key = (row["prompt_tokens"], row["tenant"])
        drawn[key] = drawn.get(key, 0) + 1
    assert set(drawn) == set(population)  # every non-empty stratum is covered
    for key, size in population.items():
        share = 100 * size / n
        assert max(1, int(share)) <= drawn[key] <= max(1, int(share) + 1)
    assert window.window_s == float("inf")


def _ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    grid = np.union1d(a, b)
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    return float(np.max(np.abs(cdf_a - cdf_b)))


def test_representativeness_statistics_match_an_independent_computation(tmp_path: Path):
    rng = np.random.default_rng(11)
    n = 2000
    prompts = rng.integers(1, 500, size=n).tolist()
    outputs = rng.integers(1, 200, size=n).tolist()
    tenants = rng.choice(["a", "b"], size=n, p=[0.5, 0.5]).tolist()
    logs = write_canonical(
        tmp_path / "logs.parquet",
        [i * 0.01 for i in range(n)],
        prompt_tokens=prompts,
        output_tokens=outputs,
        tenant=tenants,
    )
    biased = pq.read_table(logs).filter(pq.read_table(logs).column("prompt_tokens").to_numpy() < 200)
    result = representativeness(logs, biased, alpha=0.01)
    by_column = {t["column"]: t for t in result["tests"]}
    expected_d = _ks_statistic(biased.column("prompt_tokens").to_numpy(), np.array(prompts))
    assert by_column["prompt_tokens"]["statistic"] == pytest.approx(expected_d)
    assert by_column["prompt_tokens"]["passed"] is False and result["passed"] is False
    counts = {k: biased.column("tenant").to_pylist().count(k) for k in ("a", "b")}
    shares = {k: tenants.count(k) / n for k in ("a", "b")}
    expected_chi2 = sum(
        (counts[k] - biased.num_rows * shares[k]) ** 2 / (biased.num_rows * shares[k]) for k in ("a", "b")
    )
    assert by_column["tenant"]["statistic"] == pytest.approx(expected_chi2)
    assert "route" not in by_column  # one category only: nothing to test
    assert result["alpha_per_test"] == pytest.approx(0.01 / 3)
    fair = representativeness(logs, pq.read_table(logs).take(list(range(0, n, 2))), alpha=0.01)
    assert fair["passed"] is True
