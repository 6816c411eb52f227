"""What the Dagster UI shows of the demo pack's runs agrees with the pack (issue 29): the verdicts,
one per candidate × metric × basis; the sha256 of every file a materialisation wrote and read, the
values the pack's lineage rows name; the combined files' partition files and runs; and one analysis
table can be materialised alone; the CLI's runs are stored as the code location's runs."""

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from dagster import AssetCheckKey, AssetKey, AssetRecordsFilter, DagsterInstance

from assets.automation import REVALIDATION_JOB
from assets.support.partitions import register
from pipeline import REPO_ROOT
from pipeline.definitions import build_definitions
from pipeline.files.hashing import sha256_file
from tests.support.demo_pack import CANDIDATES, INSTANCE_GROUP, DemoPack

# opens the pack's Dagster instance: never beside test_partitions' copy of it
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(INSTANCE_GROUP)]


@pytest.fixture(scope="module")
def shown(demo_pack: DemoPack) -> dict:
    """Per partition (and `None`: the side-by-side pack), its pack document and the metadata of the
    latest materialisation of each asset the test reads, as the UI shows them."""
    top = json.loads((demo_pack.folder / "evidence_pack.json").read_text())
    names = ["raw_timings", "latency_percentiles", "figures", "evidence_pack"]
    out: dict = {}
    with DagsterInstance.local_temp(tempdir=str(demo_pack.folder / ".dagster")) as instance:
        out[None] = {"pack": top, "candidate_comparison": _metadata(instance, "candidate_comparison", None)}
        for partition in top["partitions"]:
            key = instance.get_run_by_id(partition["run_id"]).tags["dagster/partition"]
            folder = demo_pack.folder / "candidates" / partition["candidate"] / partition["model_version"]
            out[partition["candidate"]] = {
                "folder": folder,
                "pack": json.loads((folder / "evidence_pack.json").read_text()),
                **{name: _metadata(instance, name, key) for name in names},
            }
    return out


def _metadata(instance: DagsterInstance, name: str, partition: str | None) -> dict:
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(name), asset_partitions=[partition] if partition else None), limit=1
    ).records
    assert records, (name, partition)
    return {key: value.value for key, value in records[0].asset_materialization.metadata.items()}


def _verdicts(pack: dict) -> dict:
    return {
        f"{f['candidate']}/{f['metric']}/{f['basis']}": f["verdict"]
        for f in pack["figures"]
        if f["claimed"] is not None
    }


def test_the_ui_verdicts_are_the_packs_one_per_basis(shown):
    top = shown[None]
    assert top["candidate_comparison"]["verdicts"] == _verdicts(top["pack"])
    for candidate in CANDIDATES:
        assert shown[candidate]["evidence_pack"]["verdicts"] == _verdicts(shown[candidate]["pack"])
    # the demo measures its claims at the production load and at the vendor's conditions: both shown
    keys = set(top["candidate_comparison"]["verdicts"])
    assert {"fastserve-8b/ttft_ms_p95/production_load", "fastserve-8b/ttft_ms_p95/vendor_conditions"} <= keys


def test_every_hash_in_the_ui_is_the_one_the_pack_names(shown):
    for candidate in CANDIDATES:
        partition, folder = shown[candidate], shown[candidate]["folder"]
        figure = next(
            f for f in partition["pack"]["figures"] if (f["metric"], f["basis"]) == ("ttft_ms_p95", "production_load")
        )
        lineage = figure["lineage"]
        raw = next(ref for ref in lineage["inputs"] if ref["path"] == "data/raw_timings.parquet")
        # what the replay wrote, what the analysis read, what the pack names: one hash
        assert partition["raw_timings"]["sha256"] == raw["sha256"] == sha256_file(folder / raw["path"])
        latency = partition["latency_percentiles"]
        read = {ref["path"]: ref["sha256"] for ref in latency["inputs"]}
        assert read["data/raw_timings.parquet"] == raw["sha256"]
        assert latency["sql"] == lineage["sql"] and latency["sql_sha256"] == lineage["sql_sha256"]
        assert [(s["path"], s["sha256"]) for s in latency["staged_sql"]] == [
            (s["path"], s["sha256"]) for s in lineage["staged_sql"]
        ]
        assert latency["sha256"] == sha256_file(folder / "data" / "latency_percentiles.parquet")
        assert partition["figures"]["sha256"] == sha256_file(folder / "data" / "figures.parquet")
        pack = partition["evidence_pack"]
        assert pack["json_sha256"] == sha256_file(folder / "evidence_pack.json")
        assert pack["inputs"] == partition["pack"]["inputs"]


def test_the_figures_asset_shows_every_figure_the_pack_shows_with_its_raw_timings_hash(shown):
    for candidate in CANDIDATES:
        partition = shown[candidate]
        assert partition["figures"]["verdicts"] == _verdicts(partition["pack"])
        rows = partition["figures"]["figures"].splitlines()[2:]
        assert len(rows) == len(partition["pack"]["figures"])  # every figure, none twice
        for figure in partition["pack"]["figures"]:
            row = next(r for r in rows if r.startswith(f"| {candidate} | {figure['metric']} | {figure['basis']} |"))
            assert f"| {figure['verdict'] or '—'} |" in row or figure.get("not_judged"), row
            raw = [ref for ref in figure["lineage"]["inputs"] if ref["path"] == "data/raw_timings.parquet"]
            assert all(f"data/raw_timings.parquet {ref['sha256']}" in row for ref in raw), row
        # the column descriptions come from the contracts registry
        schema = partition["raw_timings"]["dagster/column_schema"]
        assert next(c for c in schema.columns if c.name == "ttft_ms").description.startswith("time to first token")


def test_a_combined_file_names_the_partition_files_and_runs_it_was_merged_from(shown, demo_pack):
    top = shown[None]
    merged = {entry["path"]: entry for entry in top["candidate_comparison"]["merged_from"]}
    raw = merged["data/raw_timings.parquet"]
    named = next(ref for ref in top["pack"]["inputs"] if ref["path"] == "data/raw_timings.parquet")
    assert (raw["sha256"], raw["rows"]) == (named["sha256"], named["rows"])
    runs = {p["candidate"]: p for p in top["pack"]["partitions"]}
    assert [part["candidate"] for part in raw["merged_from"]] == list(CANDIDATES)
    for part in raw["merged_from"]:
        run = runs[part["candidate"]]
        assert part["path"] == f"candidates/{run['candidate']}/{run['model_version']}/data/raw_timings.parquet"
        assert part["run_id"] == run["run_id"]
        assert part["sha256"] == sha256_file(Path(demo_pack.folder) / part["path"])
    assert sum(part["rows"] for part in raw["merged_from"]) == raw["rows"]


def test_one_analysis_table_materialises_alone_and_its_siblings_stay_as_they_were(demo_pack, tmp_path, monkeypatch):
    """The analysis multi-asset is subsettable: `latency_percentiles` alone re-writes only its own
    file (issue 29: it used to re-materialise its four siblings too)."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out, spec = tmp_path / "pack", tmp_path / "spec.yaml"
    shutil.copytree(demo_pack.folder, out, ignore=shutil.ignore_patterns(".dagster"))
    spec.write_text(yaml.safe_dump(demo_pack.spec, sort_keys=False))
    partition = json.loads((out / "evidence_pack.json").read_text())["partitions"][0]
    data = out / "candidates" / partition["candidate"] / partition["model_version"] / "data"
    before = {name: sha256_file(data / f"{name}.parquet") for name in SIBLINGS}
    own = sha256_file(data / "latency_percentiles.parquet")
    job = build_definitions(spec, out).resolve_job_def(REVALIDATION_JOB)
    with DagsterInstance.ephemeral() as instance:
        key = register(instance, partition["candidate"], partition["model_version"])
        result = job.execute_in_process(
            instance=instance, partition_key=key, asset_selection=[AssetKey("latency_percentiles")]
        )
    assert result.success
    written = {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}
    assert written == {"latency_percentiles"}
    assert {name: sha256_file(data / f"{name}.parquet") for name in SIBLINGS} == before
    # re-written by this run, byte for byte (issue 43 item 4): it carries the run that measured its
    # raw timings, not this one
    run_ids = pq.read_table(data / "latency_percentiles.parquet", columns=["run_id"]).column("run_id").unique()
    assert run_ids.to_pylist() == [partition["run_id"]] != [result.run_id]
    assert sha256_file(data / "latency_percentiles.parquet") == own


def test_each_check_names_the_partition_it_judged_and_a_passing_one_reads_as_passing(demo_pack):
    """Issue 29: the Checks tab showed "Partition —", the other candidate's latest result, and
    `failed [Show JSON]` under a check that passed. Each partitioned check's evaluation now names its
    partition, targets that partition's materialisation and, passing, carries no `failed` entry."""
    top = json.loads((demo_pack.folder / "evidence_pack.json").read_text())
    check = AssetCheckKey(AssetKey("latency_percentiles"), "latency_percentiles_ordered")
    with DagsterInstance.local_temp(tempdir=str(demo_pack.folder / ".dagster")) as instance:
        records = instance.event_log_storage.get_asset_check_execution_history(check, limit=10)
        judged = {}
        for record in records:
            evaluation = record.event.dagster_event.event_specific_data
            judged[record.partition] = (record.run_id, evaluation)
        for partition in top["partitions"]:
            key = instance.get_run_by_id(partition["run_id"]).tags["dagster/partition"]
            run_id, evaluation = judged[key]
            assert run_id == partition["run_id"] and evaluation.partition == key
            materialised = instance.fetch_materializations(
                AssetRecordsFilter(asset_key=check.asset_key, asset_partitions=[key]), limit=1
            ).records[0]
            assert evaluation.target_materialization_data.run_id == materialised.run_id == partition["run_id"]
            assert evaluation.passed and "failed" not in evaluation.metadata
            assert evaluation.metadata["successful"].value == evaluation.metadata["evaluated"].value > 0


SIBLINGS = ("throughput", "throughput_buckets", "error_breakdown", "cost_per_decision")


def test_the_cli_runs_are_stored_as_runs_of_the_code_location(demo_pack):
    """Issue 29 item 5: `loadproof run` executes the job in its own process, yet each of its runs is
    stored with the origin of the code location workspace.yaml names (what the UI's timeline and
    asset history group runs by; a run with none is left off the timeline), and with the resources
    it ran with in its run config (a re-execution from the UI measures the same spec, same folder)."""
    (entry,) = yaml.safe_load((REPO_ROOT / "workspace.yaml").read_text())["load_from"]
    top = json.loads((demo_pack.folder / "evidence_pack.json").read_text())
    # the plan run's, each partition's (side by side), the comparison's
    cli_runs = {p["run_id"] for p in top["partitions"]} | {top["run_id"], top["lineage"]["plan_run_id"]}
    with DagsterInstance.local_temp(tempdir=str(demo_pack.folder / ".dagster")) as instance:
        runs = instance.get_runs()
    assert {run.run_id for run in runs} == cli_runs
    for run in runs:
        origin = run.remote_job_origin
        assert origin is not None, run.run_id
        assert origin.location_name == entry["python_module"]["location_name"] == "loadproof"
        assert (origin.repository_origin.repository_name, origin.job_name) == ("__repository__", REVALIDATION_JOB)
        resources = run.run_config["resources"]
        assert resources["storage"]["config"]["out_dir"] == str(demo_pack.folder)
        assert resources["spec"]["config"]["spec_path"] == str(demo_pack.folder.parent / "spec.yaml")
