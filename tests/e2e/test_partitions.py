"""Candidates × model versions as dynamic partitions, and history against the previous version."""

import copy
import json
import shutil

import pytest
from dagster import AssetKey, DagsterInstance, DagsterRunStatus

from assets.runner import execute
from assets.support.partitions import REVALIDATION_PARTITIONS, partition_key
from pipeline.files.partition_keys import partition_safe
from pipeline.pack.assemble import history
from pipeline.reference import ReferenceServer
from tests.support.demo_pack import FIRST_VERSION, INSTANCE_GROUP
from tests.support.specs import profile_file


def test_partition_keys_are_safe_for_dagster_and_folders():
    assert partition_safe("meta-llama/Llama-3.1 8B|fp8") == "meta-llama_Llama-3.1_8B_fp8"
    assert partition_safe("2026-11-01+7a68e08b5b1b") == "2026-11-01+7a68e08b5b1b"
    assert partition_safe("..") == "_.._"
    key = partition_key("budget-8b", "v1,[x]")
    assert key.keys_by_dimension == {"candidate": "budget-8b", "model_version": "v1__x_"}


def test_previous_version_is_the_last_measured_one_seen_before():
    order = ["a", "b", "c", "d"]
    assert history.previous_version(order, {"a", "c", "d"}, "d") == "c"
    assert history.previous_version(order, {"a", "d"}, "d") == "a"
    assert history.previous_version(order, {"b"}, "b") is None
    assert history.previous_version(order, {"a"}, "zzz") is None


def test_history_deltas_and_verdict_changes():
    def figure(metric, measured, verdict):
        return {
            "candidate": "c",
            "metric": metric,
            "unit": "ms",
            "claimed": 250.0,
            "measured": measured,
            "verdict": verdict,
        }

    before = {
        "run_id": "r1",
        "figures": [figure("ttft_ms_p95", 200.0, "holds"), figure("gone", 1.0, "holds")],
        "endpoint_fingerprints": [{"fingerprint_sha256": "aa"}],
    }
    now = {
        "figures": [figure("ttft_ms_p95", 300.0, "not reproduced"), figure("new", 2.0, "holds")],
        "endpoint_fingerprints": [{"fingerprint_sha256": "bb"}],
    }
    result = history.compare(now, before, "v1")
    assert result["previous_model_version"] == "v1" and result["previous_run_id"] == "r1"
    assert result["fingerprint_changed"] is True
    (row,) = result["rows"]
    assert (row["metric"], row["previous"], row["current"], row["delta"]) == ("ttft_ms_p95", 200.0, 300.0, 100.0)
    assert row["relative_change"] == pytest.approx(0.5) and row["verdict_changed"] is True
    assert history.compare(now, None, None)["rows"] == []


@pytest.mark.slow
@pytest.mark.xdist_group(INSTANCE_GROUP)  # copies the pack's Dagster instance: never while test_pack_e2e opens it
def test_a_new_version_is_a_new_partition_whose_pack_compares_with_the_previous(
    tmp_path, write_spec, demo_pack, monkeypatch
):
    # Continues from a copy of the session's demo pack (both candidates measured at FIRST_VERSION):
    # fastserve-8b now serves a new version, and only it is re-measured (a spec of that candidate).
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "pack"
    shutil.copytree(demo_pack.folder, out)
    with DagsterInstance.local_temp(tempdir=str(out / ".dagster")) as instance:
        first = instance.get_runs()
    assert len(first) == 4  # the plan run, one partition run per candidate (side by side), then the comparison
    assert {run.status for run in first} == {DagsterRunStatus.SUCCESS}
    data = copy.deepcopy(demo_pack.spec)
    data["candidates"] = data["candidates"][:1]
    with ReferenceServer(profile_file(tmp_path, "2026-12-01")) as server:
        data["candidates"][0]["base_url"] = server.base_url
        second = execute(write_spec(data), out)
    assert all(result.success for result in second)
    assert len(second) == 2  # one partition run (one candidate), then the comparison

    with DagsterInstance.local_temp(tempdir=str(out / ".dagster")) as instance:
        versions = instance.get_dynamic_partitions("model_versions")
        assert instance.get_dynamic_partitions("candidates") == ["fastserve-8b", "budget-8b"]
        assert [v.split("+")[0] for v in versions] == [FIRST_VERSION, "2026-12-01"]  # both candidates served the first
        packs = [
            REVALIDATION_PARTITIONS.get_partition_key_from_str(k).keys_by_dimension
            for k in instance.get_materialized_partitions(AssetKey("evidence_pack"))
        ]
        assert {k["model_version"] for k in packs if k["candidate"] == "fastserve-8b"} == set(versions)
        assert instance.get_materialized_partitions(AssetKey("raw_timings")) == instance.get_materialized_partitions(
            AssetKey("evidence_pack")
        )

    old, new = (
        json.loads((out / "candidates" / "fastserve-8b" / v / "evidence_pack.json").read_text()) for v in versions
    )
    assert old["history"]["previous_model_version"] is None and old["partition"]["model_version"] == versions[0]
    past = new["history"]
    assert past["previous_model_version"] == versions[0] and past["previous_run_id"] == old["run_id"]
    assert past["fingerprint_changed"] is True  # the advertised version changed
    rows = {row["metric"]: row for row in past["rows"]}
    measured_before = {f["metric"]: f["measured"] for f in old["figures"]}
    measured_now = {f["metric"]: f["measured"] for f in new["figures"]}
    assert set(rows) == set(measured_before) & set(measured_now)
    for metric, row in rows.items():
        assert row["previous"] == measured_before[metric] and row["current"] == measured_now[metric]
        if row["delta"] is not None:
            assert row["delta"] == pytest.approx(measured_now[metric] - measured_before[metric])
    assert (
        "History: fastserve-8b" in (out / "candidates" / "fastserve-8b" / versions[1] / "evidence_pack.md").read_text()
    )

    # the side-by-side pack at the top follows each candidate's latest version
    top = json.loads((out / "evidence_pack.json").read_text())
    assert [(p["candidate"], p["model_version"]) for p in top["partitions"]] == [("fastserve-8b", versions[1])]
    assert top["partitions"][0]["run_id"] == new["run_id"]
