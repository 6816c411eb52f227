"""The same inputs give the same bytes (issue 43 item 4): a table written twice is the same file,
and the analysis queries' floating-point sums do not depend on the order their rows arrive in
(DuckDB's threads meet the rows in any order), so re-materialising an asset on the same files
leaves every sha256 of the pack's manifest true."""

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import PARQUET_COMPRESSION, PARQUET_ROW_GROUP_ROWS, write_parquet
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict


def spec(price: dict) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["candidates"] = [dict(data["candidates"][0], name="c", price=price, tokenizer="loadproof-approx")]
    data["workload"]["prompts"] = {**data["workload"].get("prompts", {}), "tokenizer": "loadproof-approx"}
    return Spec.model_validate(data)


TOKEN_PRICE = {"usd_per_million_input_tokens": 0.137, "usd_per_million_output_tokens": 0.613}


def raw_rows(seed: int = 11) -> list[dict]:
    """300 requests with irregular timings and token counts (their sums are not exact in binary),
    a few failed, the server's counts a little off the client's (the bill check has ratios)."""
    rng = random.Random(seed)
    rows = []
    for i in range(300):
        ttft = int(rng.lognormvariate(3.5, 0.8) * MS) + 1
        tokens = rng.randint(3, 40)
        row = timing(f"q{i}", S + i * 37 * MS + rng.randint(0, 9_999), ttft, ttft + rng.randint(50, 900) * MS, tokens)
        if i % 41 == 5:
            row = timing(f"q{i}", S + i * 37 * MS, 0, 5 * MS, error="http_5xx")
        else:
            row["prompt_tokens_client"] = rng.randint(10, 4000)
            row["prompt_tokens"] = row["prompt_tokens_client"] + rng.randint(0, 30)
        rows.append(row)
    return rows


def shuffled(rows: list[dict], seed: int) -> pa.Table:
    order = list(rows)
    random.Random(seed).shuffle(order)
    return pa.Table.from_pylist(order, schema=RAW_TIMING_RECORD_SCHEMA)


def test_the_same_table_written_twice_is_the_same_file(tmp_path: Path):
    rng = random.Random(3)
    table = pa.table(
        {
            "request_id": [f"q{i}" for i in range(1000)],
            "value": [rng.random() * 1e3 for _ in range(1000)],
            "n": pa.array(range(1000), pa.int64()),
            "note": [None if i % 3 else "x" for i in range(1000)],
            "run_id": ["r"] * 1000,
        }
    )
    first = write_parquet(table, tmp_path / "a" / "t.parquet").read_bytes()
    again = write_parquet(table, tmp_path / "a" / "t.parquet").read_bytes()  # rewritten in place
    elsewhere = write_parquet(pa.Table.from_pylist(table.to_pylist()), tmp_path / "b" / "t.parquet").read_bytes()
    assert first == again == elsewhere
    metadata = pq.ParquetFile(tmp_path / "a" / "t.parquet").metadata
    assert metadata.row_group(0).column(1).compression == PARQUET_COMPRESSION.upper()
    assert metadata.num_row_groups == -(-table.num_rows // PARQUET_ROW_GROUP_ROWS)
    assert metadata.created_by.startswith("parquet-cpp-arrow version")  # a version, never a clock


@pytest.mark.parametrize("price", [TOKEN_PRICE, {"usd_per_hour": 2.71, "replicas": 3}], ids=["tokens", "hourly"])
def test_the_figure_queries_give_the_same_bits_on_shuffled_rows(tmp_path: Path, price: dict):
    rows, the_spec = raw_rows(), spec(price)
    results = []
    for seed in range(4):
        raw = shuffled(rows, seed)
        # throughput carries the reply mix and the bill check; cost its float sums over levels
        made = {
            "throughput": tables.throughput(raw, the_spec),
            "cost_per_decision": tables.cost_per_decision(raw, the_spec),
            "latency_percentiles": tables.latency_percentiles(raw, the_spec),
        }
        written = {
            name: write_parquet(table, tmp_path / str(seed) / f"{name}.parquet").read_bytes()
            for name, table in made.items()
        }
        results.append((made, written))
    (first, first_bytes), *others = results
    assert first["throughput"].num_rows == 1 and first["throughput"].column("bill_requests")[0].as_py() > 0
    for made, written in others:
        for name, table in made.items():
            assert table.equals(first[name]), name  # bit for bit: == on every double
        assert written == first_bytes


def test_the_same_rows_with_another_run_id_leave_the_file_and_its_run_as_they_were(tmp_path: Path):
    """A table re-made from the same inputs by a later run (the log ingested again) keeps the file
    the first run wrote, its run id included; a changed row, or a changed run id alone on a table
    that carries none, writes the new one."""
    path = tmp_path / "t.parquet"
    first = pa.table({"x": [1.5, 2.5, 3.5], "run_id": ["run-1"] * 3})
    write_parquet(first, path)
    written = path.read_bytes()
    write_parquet(first.set_column(1, "run_id", pa.array(["run-2"] * 3)), path)
    assert path.read_bytes() == written and pq.read_table(path).column("run_id")[0].as_py() == "run-1"
    assert not path.with_suffix(".parquet.partial").exists()
    changed = pa.table({"x": [1.5, 2.5, 4.5], "run_id": ["run-2"] * 3})
    write_parquet(changed, path)
    assert pq.read_table(path).equals(changed)
    reordered = pa.table({"x": [4.5, 2.5, 1.5], "run_id": ["run-2"] * 3})
    write_parquet(reordered, path)
    assert pq.read_table(path).equals(reordered)  # the same rows in another order: a new file
