"""The Dagster checks run the great-expectations suites and carry GE's result in their metadata
(invoked directly on a pack folder holding crafted tables)."""

import gc
import json

import pyarrow as pa
import pytest
from dagster import AssetCheckSeverity, build_asset_check_context

from assets.analysis import latency_percentiles_ordered
from assets.support import partitions
from assets.workload import production_sample_representative
from pipeline.contracts import LATENCY_PERCENTILES, PRODUCTION_SAMPLE_WINDOW
from pipeline.files.layout import PackLayout, write_parquet, write_text
from resources import PackStorage


@pytest.fixture(autouse=True)
def collect_garbage():
    """Direct invocation leaves an ephemeral Dagster instance whose SQLite pool logs an error when
    garbage-collected; collected later, inside another `ast.parse`, its traceback formatting (which
    parses too) trips CPython 3.11's AST recursion counter (python/cpython#106905). Collect here."""
    yield
    gc.collect()


def latency_table(values) -> pa.Table:
    rows = [
        {
            "candidate": "x",
            "metric": "ttft_ms",
            "scope": "all",
            "q": q,
            "n": 50,
            "value": v,
            "ci_low": None,
            "ci_high": None,
        }
        for q, v in zip((0.5, 0.9, 0.95, 0.99, 0.999), values)
    ]
    return pa.Table.from_pylist(rows)


def test_latency_check_fails_on_unordered_percentiles_with_ges_result(tmp_path, monkeypatch):
    # A partitioned asset's check reads its candidate × version folder (PackStorage.partition_layout,
    # shared inputs synced in). A directly built check context carries no run tags, so only the
    # tag reading is replaced: the partition is candidate x, version v1.
    monkeypatch.setattr(partitions, "partition_of", lambda context: ("x", "v1"))
    storage, context = PackStorage(out_dir=str(tmp_path)), build_asset_check_context()
    folder = PackLayout(tmp_path).partition("x", "v1")
    write_parquet(latency_table([1.0, 2.0, 3.0, 4.0, 5.0]), folder.path(LATENCY_PERCENTILES))
    good = latency_percentiles_ordered(context=context, storage=storage)
    assert good.passed and good.metadata["suite"].value == "latency_percentiles"
    # a passing check shows no `failed` row (the UI read it as `failed [Show JSON]`)
    assert "failed" not in good.metadata and good.metadata["successful"].value == good.metadata["evaluated"].value
    write_parquet(latency_table([1.0, 2.0, 1.5, 4.0, 5.0]), folder.path(LATENCY_PERCENTILES))
    bad = latency_percentiles_ordered(context=context, storage=storage)
    assert not bad.passed
    failures = bad.metadata["failed"].value
    assert [f["expectation"] for f in failures] == ["expect_column_pair_values_a_to_be_greater_than_b"]
    assert failures[0]["kwargs"]["column_B"] == "lower_percentile_value"


def test_representativeness_check_feeds_scipys_p_values_through_ge(tmp_path):
    storage = PackStorage(out_dir=str(tmp_path))
    tests = [
        {
            "test": "ks_2samp",
            "column": "prompt_tokens",
            "statistic": 0.4,
            "p_value": 1e-6,
            "n_sample": 50,
            "n_population": 900,
            "passed": False,
        },
        {
            "test": "ks_2samp",
            "column": "output_tokens",
            "statistic": 0.1,
            "p_value": 0.6,
            "n_sample": 50,
            "n_population": 900,
            "passed": True,
        },
    ]
    check = {"alpha": 0.01, "alpha_per_test": 0.005, "passed": False, "tests": tests, "on_fail": "warn"}
    write_text(
        json.dumps({"window_s": 60.0, "representativeness": check}), PackLayout(tmp_path).path(PRODUCTION_SAMPLE_WINDOW)
    )
    result = production_sample_representative(storage=storage)
    assert not result.passed and result.severity == AssetCheckSeverity.WARN
    assert result.metadata["failed_tests"].value == "ks_2samp prompt_tokens"
    assert result.metadata["failed"].value[0]["unexpected_examples"] == [1e-6]


def test_every_check_on_a_partitioned_asset_judges_that_partition():
    """A check on a candidate × version asset is partitioned like it, so its evaluation names the
    partition it judged (the UI's Checks tab showed "Partition —", and the other candidate's result);
    a check on a shared asset is not."""
    from pipeline.definitions import build_definitions

    graph = build_definitions().resolve_asset_graph()
    for key in graph.asset_check_keys:
        asset = graph.get(key.asset_key).partitions_def
        assert graph.get_check_spec(key).partitions_def == asset, key.name
    assert any(graph.get(k.asset_key).partitions_def is None for k in graph.asset_check_keys)
