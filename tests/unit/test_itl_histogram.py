"""ITL from the microsecond histogram (sql/itl_histogram.sql): the gaps counted per whole µs, and
percentiles with their order-statistic intervals read off the counts equal those of a full sort
of the raw gaps, to 1 µs."""

import math
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline.analysis.statistics.stats import order_statistic_ranks
from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.spec import Spec
from tests.support.raw_timings import record
from tests.support.specs import demo_spec_dict

S = 1_000_000_000
US = 1_000


def request(
    request_id: str, sent_ns: int, gaps_ns: list[int], prompt_tokens: int = 10, ttft_ns: int = 5_000_000
) -> dict:
    """A successful request whose content chunks are `gaps_ns` apart."""
    chunks = [sent_ns + ttft_ns]
    for gap in gaps_ns:
        chunks.append(chunks[-1] + gap)
    return record(request_id, sent_ns, chunks, chunks[-1] + 1, prompt_tokens=prompt_tokens)


def spec(warmup_s: float = 0, cooldown_s: float = 0, intervals: str = "dependence_aware") -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=warmup_s, cooldown_s=cooldown_s)
    data["sla"] = {}
    data.setdefault("analysis", {})["intervals"] = intervals
    data["candidates"][0]["name"] = "c"
    return Spec.model_validate(data)


def write(tmp_path: Path, rows: list[dict], name: str = "raw.parquet") -> Path:
    return write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / name)


def itl_rows(table: pa.Table, scope: str = "all") -> dict:
    return {r["percentile"]: r for r in table.to_pylist() if r["metric"] == "itl_ms" and r["scope"] == scope}


def test_five_gaps_by_hand(tmp_path: Path):
    # gaps 1.0004, 2.0006, 2.0, 3.0, 0.5, 4.0 ms → 1000, 2001, 2000, 3000, 500, 4000 µs
    path = write(tmp_path, [request("q", 0, [1_000_400, 2_000_600, 2_000_000, 3_000_000, 500_000, 4_000_000])])
    histogram = tables.itl_histogram(path, spec())
    assert {r["gap_us"]: r["gaps"] for r in histogram.to_pylist()} == {
        500: 1,
        1000: 1,
        2000: 1,
        2001: 1,
        3000: 1,
        4000: 1,
    }
    assert set(histogram.column("in_steady_window").to_pylist()) == {True}
    assert set(histogram.column("prompt_bucket_lower").to_pylist()) == {0}  # 10 prompt tokens: bucket 0-255
    itl = itl_rows(tables.latency_percentiles(path, spec()))
    # sorted 0.5, 1.0, 2.0, 2.001, 3.0, 4.0 ms; p50 = the ceil(3) = 3rd = 2.0 ms. Binom(6, 0.5):
    # P(≤0) = 1/64 ≤ 0.025 → low rank 1; P(≤5) = 63/64 ≥ 0.975 → high rank 6: [0.5, 4.0] ms
    assert (itl["p50"]["n"], itl["p50"]["value"], itl["p50"]["ci_low"], itl["p50"]["ci_high"]) == (6, 2.0, 0.5, 4.0)
    assert itl["p90"]["value"] == 4.0  # ceil(5.4) = 6th
    assert itl["p90"]["ci_high"] is None  # six gaps cannot bound a p90 from above
    assert itl["p50"]["sample_every"] == 1


def test_steady_flag_and_buckets_are_those_of_the_request(tmp_path: Path):
    # sent at 0..9 s, 3 gaps of 1 ms each; warm-up 2 s, cool-down 2 s: the window is [2 s, last end − 2 s]
    rows = [request(f"q{i}", i * S, [1_000 * US] * 3, prompt_tokens=300 if i % 2 else 10) for i in range(10)]
    histogram = tables.itl_histogram(write(tmp_path, rows), spec(warmup_s=2, cooldown_s=2)).to_pylist()
    counts = {}
    for row in histogram:
        key = (row["in_steady_window"], row["prompt_bucket_lower"], row["prompt_bucket_upper"])
        counts[key] = counts.get(key, 0) + row["gaps"]
    # request i ends at i s + 5 ms + 3 ms + 1 ns; the last at 9.008 s + 1 ns → the window ends at
    # 7.008 s + 1 ns: requests sent at 2..7 s are inside (2, 4, 6: 10 tokens; 3, 5, 7: 300 tokens), 0, 1,
    # 8, 9 outside
    assert counts == {
        (True, 0, 255): 3 * 3,
        (True, 256, 1023): 3 * 3,
        (False, 0, 255): 2 * 3,
        (False, 256, 1023): 2 * 3,
    }


def test_percentiles_and_intervals_from_the_histogram_equal_a_full_sort(tmp_path: Path):
    rng = random.Random(11)
    rows = []
    for i in range(300):
        # ties (exact repeats), sub-µs jitter that rounds both ways, and a long tail
        gaps = [
            rng.choice([2_000 * US, 2_000 * US + 499, 2_000 * US + 501, int(rng.lognormvariate(15, 0.8))])
            for _ in range(rng.randint(1, 40))
        ]
        rows.append(request(f"q{i}", i * S // 20, gaps, prompt_tokens=rng.choice([10, 300, 5000])))
    path = write(tmp_path, rows)
    table = tables.latency_percentiles(path, spec(warmup_s=1, cooldown_s=1, intervals="independent"))
    timings = pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA)
    window_start = min(r["t_sent_ns"] for r in rows) + 1 * S
    window_end = max(r["t_end_ns"] for r in rows) - 1 * S
    # the steady window counts a request by its send time only (however long it then took)
    steady = [r for r in timings.to_pylist() if window_start <= r["t_sent_ns"] <= window_end]
    scopes = {"all": steady}
    for tokens, label in ((10, "0-255"), (300, "256-1023"), (5000, "4096+")):
        scopes[label] = [r for r in steady if r["prompt_tokens"] == tokens]
    checked = 0
    for scope, members in scopes.items():
        raw = sorted(gap for r in members for gap in r["itl_ms"])
        rounded = [math.floor(gap * 1000.0 + 0.5) / 1000.0 for gap in raw]  # to the nearest µs
        for _name, row in itl_rows(table, scope).items():
            ranks = order_statistic_ranks(len(raw), row["q"], 0.95)
            assert row["n"] == len(raw)
            assert row["value"] == pytest.approx(rounded[ranks.point - 1], abs=1e-12)
            assert abs(row["value"] - raw[ranks.point - 1]) <= 0.0005 + 1e-12  # exact to 1 µs
            for end, rank in (("ci_low", ranks.low), ("ci_high", ranks.high)):
                expected = None if rank is None else rounded[rank - 1]
                assert row[end] == (None if expected is None else pytest.approx(expected, abs=1e-12))
            checked += 1
    assert checked == 4 * 5


def test_a_stored_histogram_is_read_only_when_built_for_this_window(tmp_path: Path):
    rows = [request(f"q{i}", i * S, [1_000 * US + i * US] * 4) for i in range(10)]
    path = write(tmp_path, rows)
    fresh = itl_rows(tables.latency_percentiles(path, spec()))
    stored = write_parquet(tables.itl_histogram(path, spec()), tmp_path / "itl_histogram.parquet")
    assert tables.itl_histogram_usable(stored, spec())
    assert itl_rows(tables.latency_percentiles(path, spec(), stored)) == fresh
    # proof that the stored one is what is read: every gap shifted by +1 ms shows in the figure
    shifted = tables.itl_histogram(path, spec())
    shifted = shifted.set_column(
        shifted.schema.get_field_index("gap_us"), "gap_us", pc.add(shifted.column("gap_us"), 1000)
    )
    assert itl_rows(tables.latency_percentiles(path, spec(), shifted))["p50"]["value"] == fresh["p50"]["value"] + 1.0
    # built for another warm-up, or missing: not used, the figures come from the raw timings
    other = write_parquet(tables.itl_histogram(path, spec(warmup_s=3)), tmp_path / "other.parquet")
    assert not tables.itl_histogram_usable(other, spec())
    assert itl_rows(tables.latency_percentiles(path, spec(), other)) == fresh
    assert itl_rows(tables.latency_percentiles(path, spec(), tmp_path / "missing.parquet")) == fresh


def test_analyse_all_returns_the_histogram_it_built(tmp_path: Path):
    rows = [request(f"q{i}", i * S, [1_000 * US + i * US] * 4) for i in range(10)]
    path = write(tmp_path, rows)
    built = tables.analyse_all(path, spec())["itl_histogram"]
    assert built.drop_columns([]).equals(tables.itl_histogram(path, spec()))
    stored = write_parquet(built, tmp_path / "itl_histogram.parquet")
    assert "itl_histogram" not in tables.analyse_all(path, spec(), itl_histogram=stored)
