"""The Dagster project: definitions load, and the whole graph materialises against loopback."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from dagster import AssetKey, DagsterInstance
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.definitions import REVALIDATION_JOB, defs
from pipeline.hashing import sha256_file
from tests.conftest import demo_spec_dict

ASSETS = [
    "production_logs", "production_sample", "prompt_profile", "replay_plan", "raw_timings",
    "latency_percentiles", "throughput", "throughput_buckets", "error_breakdown", "cost_per_decision",
    "labelled_slice", "accuracy_results", "accuracy_summary", "accuracy_by_label", "evidence_pack",
]
PACK_KEYS = {"run_id", "spec_sha256", "figures", "client_validity", "manifest"}
FIGURE_KEYS = {"candidate", "metric", "unit", "claimed", "measured", "ci_low", "ci_high", "n", "verdict", "lineage"}


def test_definitions_hold_every_asset_with_at_least_one_check():
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert set(ASSETS) <= keys
    checked = {check.asset_key.to_user_string() for check in graph.asset_check_keys}
    assert set(ASSETS) <= checked
    assert defs.resolve_job_def(REVALIDATION_JOB) is not None


def small_spec(write_spec, base_url: str, **workload) -> Path:
    data = demo_spec_dict()
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["base_url"] = base_url
    data["workload"]["sample"].update(window_s=8)
    data["workload"]["replay"].update(warmup_s=1, cooldown_s=1, max_duration_s=60)
    data["workload"].update(workload)
    return write_spec(data)


@pytest.mark.slow
def test_cli_run_materialises_the_whole_graph_against_the_reference_endpoint(tmp_path, write_spec, zero_server, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "sk-test-never-written")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "pack"
    result = CliRunner().invoke(app, ["run", str(small_spec(write_spec, zero_server.base_url)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Claim vs measured" in result.output and "checks failed: none" in result.output

    pack = json.loads((out / "evidence_pack.json").read_text())
    assert PACK_KEYS <= set(pack)
    assert all(FIGURE_KEYS <= set(figure) for figure in pack["figures"])
    claimed = {f["metric"]: f for f in pack["figures"] if f["claimed"] is not None}
    assert set(claimed) == {"output_tokens_per_s", "ttft_ms_p95", "ttft_ms_p99", "e2e_ms_p99", "tpot_ms_p50", "error_rate", "accuracy"}
    assert claimed["accuracy"]["n"] == 200  # every item of the bundled slice was scored
    assert all(f["verdict"] in {"holds", "not reproduced", "inconclusive"} for f in claimed.values())

    raw_ref = claimed["ttft_ms_p95"]["lineage"]["inputs"][0]
    assert raw_ref["path"] == "data/raw_timings.parquet"
    assert raw_ref["sha256"] == sha256_file(out / raw_ref["path"])
    assert raw_ref["rows"] == pq.read_metadata(out / "data" / "replay_plan.parquet").num_rows  # one candidate
    assert (out / claimed["ttft_ms_p95"]["lineage"]["sql"]).read_text().startswith("-- latency_percentiles")
    for entry in pack["manifest"]:
        assert sha256_file(out / entry["path"]) == entry["sha256"]

    everything = "\n".join(p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file() and ".dagster" not in p.parts)
    assert "sk-test-never-written" not in everything

    with DagsterInstance.local_temp(tempdir=str(out / ".dagster")) as instance:
        for name in ASSETS:
            event = instance.get_latest_materialization_event(AssetKey(name))
            assert event is not None and event.run_id == pack["run_id"], name


def test_a_failing_blocking_check_stops_the_run_before_the_pack(tmp_path, write_spec, zero_server, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "pack"
    spec = small_spec(write_spec, zero_server.base_url, max_reject_rate=0.0)  # the demo log has 2 bad lines
    result = CliRunner().invoke(app, ["run", str(spec), "--out", str(out)])
    assert result.exit_code == 1
    assert "production_logs_reject_rate" in result.output
    assert not (out / "evidence_pack.json").exists()
    assert not (out / "data" / "raw_timings.parquet").exists()


def test_bad_spec_exits_2_naming_the_field(tmp_path, write_spec):
    data = demo_spec_dict()
    data["sla"]["ttft_ms"] = -5
    result = CliRunner().invoke(app, ["run", str(write_spec(data)), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "sla.ttft_ms: Input should be greater than 0" in result.output
