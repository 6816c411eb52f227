"""The same inputs give the same bytes (issue 43 item 4): every partitioned asset of a pack that is
made from files (not from requests) re-materialised through Dagster on the pack's own instance, as
`dagster asset materialize --partition …` does, and so the log-to-plan assets and the side-by-side
comparison, rewrite every file byte for byte, so `loadproof verify` still passes; and where an input
really changed, verify names the file and the run that rewrote it."""

import hashlib
import shutil
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from dagster import AssetKey, DagsterInstance
from typer.testing import CliRunner

from assets.runner import COMPARISON, asset_keys_by_partitioning
from pipeline.cli import app
from pipeline.definitions import build_definitions
from pipeline.files.layout import write_parquet
from tests.support.demo_pack import INSTANCE_GROUP

# the assets that send requests: re-running them is a new measurement, not a re-make
MEASURING = {"raw_timings", "endpoint_fingerprint", "accuracy_results", "sweep_timings", "arm_timings"}
MEASURING_SHARED = {"client_calibration"}  # against an echo endpoint of its own


def copied(demo_pack, tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    shutil.copytree(demo_pack.folder, out)
    return out


def file_hashes(pack: Path) -> dict[str, str]:
    return {
        path.relative_to(pack).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in pack.rglob("*")
        if path.is_file() and ".dagster" not in path.relative_to(pack).parts
    }


def rematerialise(demo_pack, pack: Path, names: set[str] | None = None, partitions=None) -> dict[str, str]:
    """Each partition's file-made assets (or `names`) materialised again, one run per partition, on
    the pack's instance; the run id of each partition key."""
    _, partitioned = asset_keys_by_partitioning()
    selection = [
        key for key in partitioned if key.path[-1] not in MEASURING and (names is None or key.path[-1] in names)
    ]
    job = build_definitions(demo_pack.folder.parent / "spec.yaml", pack).resolve_implicit_global_asset_job_def()
    runs = {}
    with DagsterInstance.local_temp(tempdir=str(pack / ".dagster")) as instance:
        for key in partitions or sorted(instance.get_materialized_partitions(AssetKey("raw_timings"))):
            result = job.execute_in_process(
                instance=instance, partition_key=key, asset_selection=selection, raise_on_error=False
            )
            assert result.success or names is not None, key  # an altered input may fail a check
            runs[key] = result.run_id
    return runs


def rematerialise_shared(demo_pack, pack: Path) -> list[str]:
    """The log-to-plan assets made from files materialised again in one run, then the side-by-side
    comparison in another (as the CLI runs them), on the pack's instance, as `dagster asset
    materialize --select …` does; the two run ids."""
    shared, _ = asset_keys_by_partitioning()
    job = build_definitions(demo_pack.folder.parent / "spec.yaml", pack).resolve_implicit_global_asset_job_def()
    runs = []
    with DagsterInstance.local_temp(tempdir=str(pack / ".dagster")) as instance:
        for selection in ([key for key in shared if key.path[-1] not in MEASURING_SHARED], [COMPARISON]):
            result = job.execute_in_process(instance=instance, asset_selection=selection, raise_on_error=False)
            assert result.success, selection
            runs.append(result.run_id)
    return runs


def verify(pack: Path):
    return CliRunner().invoke(app, ["verify", str(pack)])


@pytest.mark.slow
@pytest.mark.xdist_group(INSTANCE_GROUP)  # copies the pack's Dagster instance: never while test_pack_e2e opens it
def test_rematerialising_every_file_made_asset_writes_the_same_bytes(tmp_path, demo_pack, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    pack = copied(demo_pack, tmp_path)
    before = file_hashes(pack)
    started = time.perf_counter()
    runs = rematerialise(demo_pack, pack)
    print(f"re-materialised {len(runs)} partitions in {time.perf_counter() - started:.1f} s")
    assert len(runs) == 2  # both candidates
    after = file_hashes(pack)
    assert {path for path in before if before[path] != after.get(path)} == set()
    assert set(after) == set(before)
    result = verify(pack)
    assert result.exit_code == 0, result.output


@pytest.mark.slow
@pytest.mark.xdist_group(INSTANCE_GROUP)
def test_rematerialising_the_log_to_plan_assets_and_the_comparison_writes_the_same_bytes(
    tmp_path, demo_pack, monkeypatch
):
    """The log ingested again (its identifiers salted with the pack's own salt, kept in the private
    folder), the sample, profile, plan and slice made again, and the comparison: every file as it
    was, and each table's run id still the run that first made it."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    pack = copied(demo_pack, tmp_path)
    private = demo_pack.folder.with_name(demo_pack.folder.name + ".private")
    shutil.copytree(private, pack.with_name(pack.name + ".private"))  # the salt, beside the customer text
    before = file_hashes(pack)
    runs = rematerialise_shared(demo_pack, pack)
    after = file_hashes(pack)
    assert {path for path in before if before[path] != after.get(path)} == set()
    assert set(after) == set(before)
    assert not set(runs) & set(pq.read_table(pack / "data" / "production_logs.parquet").column("run_id").to_pylist())
    result = verify(pack)
    assert result.exit_code == 0, result.output


@pytest.mark.slow
@pytest.mark.xdist_group(INSTANCE_GROUP)
def test_verify_names_the_file_an_altered_input_changed_and_the_run_that_rewrote_it(tmp_path, demo_pack, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    pack = copied(demo_pack, tmp_path)
    (partition,) = [p for p in (pack / "candidates" / "fastserve-8b").iterdir() if p.is_dir()]
    raw = partition / "data" / "raw_timings.parquet"
    table = pq.read_table(raw)
    write_parquet(table.slice(0, table.num_rows - 5), raw)  # five requests dropped by hand
    key = f"fastserve-8b|{partition.name}"
    runs = rematerialise(demo_pack, pack, names={"latency_percentiles"}, partitions=[key])
    result = verify(pack)
    assert result.exit_code == 1
    prefix = partition.relative_to(pack).as_posix()
    lines = result.output.splitlines()
    assert f"FAIL {prefix}/data/latency_percentiles.parquet: sha256 differs from the manifest" in lines
    assert any(
        line.strip().startswith(f"{prefix}/data/latency_percentiles.parquet: rewritten by Dagster run {runs[key]}")
        and "asset latency_percentiles" in line
        for line in lines
    ), result.output
    assert any(
        line.strip().startswith(f"{prefix}/data/raw_timings.parquet: written by no run recorded")
        and "edited outside Dagster" in line
        for line in lines
    ), result.output
