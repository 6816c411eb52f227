"""production_sample: a window of the log that keeps its arrival process, or a stratified draw;
plus the representativeness check of the sample against the whole log.

Window modes (sql/production_sample.sql, given bounds): the busiest N seconds (two binary
searches over the sorted arrival times, O(n log n)), a named clock hour or the busiest one
(sql/busiest_hour.sql), or
explicit bounds (seconds after the first request, or absolute times). Stratified mode
(sql/production_sample_stratified.sql) is seeded: the same spec and log give the same sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from scipy import stats

from pipeline.duck import connect as duck
from pipeline.spec.workload import Sample

HOUR_US = 3_600_000_000
MIN_EXPECTED_PER_CATEGORY = 5.0  # χ² categories expected below this are pooled into "(other)"


@dataclass(frozen=True)
class SampleWindow:
    """Where the sample came from: [start_us, end_us) on the log's clock (None for stratified)."""

    mode: str
    start_us: int | None
    end_us: int | None
    first_us: int
    log_requests: int

    @property
    def window_s(self) -> float:
        """The bound every window_offset_s stays below (infinite for a stratified draw)."""
        if self.start_us is None or self.end_us is None:
            return math.inf
        return (self.end_us - self.start_us) / 1e6

    def as_dict(self) -> dict:
        return {
            "mode": self.mode,
            "window_start": _iso(self.start_us),
            "window_end": _iso(self.end_us),
            "window_s": None if math.isinf(self.window_s) else self.window_s,
            "log_requests": self.log_requests,
        }


def draw_sample(
    logs: Path, spec: Sample, memory_limit: str = duck.DEFAULT_MEMORY_LIMIT
) -> tuple[pa.Table, SampleWindow]:
    """The sample of the canonical log at `logs` that `spec` asks for."""
    with duck.connection(memory_limit) as con:
        con.read_parquet(str(logs)).create_view("production_logs")
        first_us, _last_us, requests = duck.run(con, "log_span").fetchall()[0]
        if requests == 0:
            raise ValueError(f"{logs}: the production log has no accepted request to sample")
        if spec.mode == "stratified":
            params = {
                "length_bins": spec.length_bins,
                "by_prompt_length": "prompt_length" in spec.strata,
                "by_output_length": "output_length" in spec.strata,
                "by_tenant": "tenant" in spec.strata,
                "by_route": "route" in spec.strata,
                "max_requests": spec.max_requests,
                "min_per_stratum": spec.min_per_stratum,
                "seed": spec.seed,
                "first_us": first_us,
            }
            table = duck.run(con, "production_sample_stratified", params).to_arrow_table()
            return _with_session_turns(con, table), SampleWindow("stratified", None, None, first_us, requests)
        start_us, end_us = _window_bounds(con, spec, first_us, logs)
        params = {"start_us": start_us, "end_us": end_us, "first_us": first_us, "max_requests": spec.max_requests}
        table = duck.run(con, "production_sample", params).to_arrow_table()
        return _with_session_turns(con, table), SampleWindow(spec.mode, start_us, end_us, first_us, requests)


def _with_session_turns(con, sample: pa.Table) -> pa.Table:
    """The sample plus `session_turn` and `think_time_s`, numbered over the whole log (a window
    or a draw may cut a session: its sampled turns keep their numbers, see pipeline/plan/sessions.py).
    Logs from before session ids (no `session_id` column) are returned as they are."""
    if "session_id" not in sample.schema.names:
        return sample
    duck.run(con, "session_turns").to_table("session_turns")
    con.register("sample", sample)
    try:
        return duck.run(con, "sample_session_turns").to_arrow_table()
    finally:
        con.unregister("sample")


def busiest_window_start(arrivals_us: np.ndarray, window_us: int) -> int:
    """Start of the window [t, t + W) holding the most arrivals; ties: the earliest.

    The busiest window can always start at an arrival, so every arrival time is a candidate:
    with the times sorted, the count from t is (first index ≥ t + W) − (first index ≥ t).
    One sort and two binary searches, O(n log n) (the skeleton's self-join was O(n²)).
    """
    times = np.sort(arrivals_us)
    counts = np.searchsorted(times, times + window_us, side="left") - np.searchsorted(times, times, side="left")
    return int(times[int(np.argmax(counts))])


def _window_bounds(con, spec: Sample, first_us: int, logs: Path) -> tuple[int, int]:
    window_us = round(spec.window_s * 1e6)
    if spec.mode == "busiest_window":
        arrivals = pq.read_table(logs, columns=["arrival_at"]).column("arrival_at")
        micros = pc.cast(pc.cast(arrivals, pa.timestamp("us", tz="UTC")), pa.int64())
        start_us = busiest_window_start(micros.to_numpy(), window_us)
        return start_us, start_us + window_us
    if spec.mode == "peak_hour":
        if spec.hour is not None:
            start_us = _epoch_us(spec.hour)
        else:
            start_us = duck.run(con, "busiest_hour").fetchall()[0][0]
        return start_us, start_us + HOUR_US
    if spec.start_at is not None and spec.end_at is not None:
        return _epoch_us(spec.start_at), _epoch_us(spec.end_at)
    start_us = first_us + round((spec.start_offset_s or 0.0) * 1e6)
    return start_us, start_us + window_us


def representativeness(logs: Path, sample: pa.Table, alpha: float) -> dict:
    """Two-sample KS on prompt and output lengths, χ² goodness of fit on tenant and route:
    the sample against the whole canonical log. The family of tests holds level alpha
    (Bonferroni): a test fails when its p-value is below alpha / number of tests."""
    population = pq.read_table(logs, columns=["prompt_tokens", "output_tokens", "tenant", "route"])
    tests = [
        _ks_test(column, sample.column(column), population.column(column))
        for column in ("prompt_tokens", "output_tokens")
    ]
    for column in ("tenant", "route"):
        result = _chi_square_test(column, sample.column(column), population.column(column))
        if result is not None:
            tests.append(result)
    alpha_per_test = alpha / len(tests)
    for test in tests:
        test["passed"] = test["p_value"] is not None and test["p_value"] >= alpha_per_test
    return {"alpha": alpha, "alpha_per_test": alpha_per_test, "passed": all(t["passed"] for t in tests), "tests": tests}


def _ks_test(column: str, sample: pa.ChunkedArray, population: pa.ChunkedArray) -> dict:
    if len(sample) == 0:
        return {
            "test": "ks_2samp",
            "column": column,
            "statistic": None,
            "p_value": None,
            "n_sample": 0,
            "n_population": len(population),
        }
    result = stats.ks_2samp(sample.to_numpy(), population.to_numpy())
    return {
        "test": "ks_2samp",
        "column": column,
        "statistic": float(result.statistic),
        "p_value": float(result.pvalue),
        "n_sample": len(sample),
        "n_population": len(population),
    }


def _chi_square_test(column: str, sample: pa.ChunkedArray, population: pa.ChunkedArray) -> dict | None:
    """χ² goodness of fit of the sample's category counts to the log's category shares;
    None when the log has fewer than two categories (nothing to compare)."""
    shares = _counts(population)
    if len(shares) < 2 or len(sample) == 0:
        return None
    total = sum(shares.values())
    observed_counts = _counts(sample)
    expected = {key: len(sample) * count / total for key, count in shares.items()}
    pooled_obs: dict[str, int] = {}
    pooled_exp: dict[str, float] = {}
    for key, value in expected.items():
        bucket = key if value >= MIN_EXPECTED_PER_CATEGORY else "(other)"
        pooled_exp[bucket] = pooled_exp.get(bucket, 0.0) + value
        pooled_obs[bucket] = pooled_obs.get(bucket, 0) + observed_counts.get(key, 0)
    if len(pooled_exp) < 2:
        return None
    keys = sorted(pooled_exp)
    result = stats.chisquare([pooled_obs[k] for k in keys], [pooled_exp[k] for k in keys])
    return {
        "test": "chisquare",
        "column": column,
        "statistic": float(result.statistic),
        "p_value": float(result.pvalue),
        "categories": len(keys),
        "n_sample": len(sample),
        "n_population": total,
    }


def _counts(values: pa.ChunkedArray) -> dict[str, int]:
    filled = pc.fill_null(values, "(none)")
    return {row["values"]: row["counts"] for row in pc.value_counts(filled).to_pylist()}


def _epoch_us(moment: datetime) -> int:
    return round(moment.timestamp() * 1e6)


def _iso(epoch_us: int | None) -> str | None:
    if epoch_us is None:
        return None
    return datetime.fromtimestamp(epoch_us / 1e6, tz=UTC).isoformat()
