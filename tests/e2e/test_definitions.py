"""The Dagster project: definitions load, and the whole graph materialises against loopback."""

import re
from pathlib import Path

from typer.testing import CliRunner

from assets import ASSET_MODULES
from assets.automation import REVALIDATION_JOB
from assets.support.partitions import REVALIDATION_PARTITIONS
from pipeline import REPO_ROOT
from pipeline.cli import app
from pipeline.definitions import defs
from tests.support.specs import ASSETS, DEMO_LOG, demo_spec_dict, small_spec


def test_definitions_hold_every_asset_with_at_least_one_check():
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert set(ASSETS) <= keys
    checked = {check.asset_key.to_user_string() for check in graph.asset_check_keys}
    assert set(ASSETS) <= checked


def test_the_revalidation_job_runs_every_asset_and_check_per_candidate_and_version():
    graph = defs.resolve_asset_graph()
    job = defs.resolve_job_def(REVALIDATION_JOB)
    assert job.asset_layer.selected_asset_keys == set(graph.get_all_asset_keys())
    assert set(job.asset_layer.asset_graph.asset_check_keys) == set(graph.asset_check_keys)
    assert job.partitions_def == REVALIDATION_PARTITIONS
    assert [dimension.name for dimension in REVALIDATION_PARTITIONS.partitions_defs] == ["candidate", "model_version"]


# Not marked slow: the run stops at the first asset's blocking check (a few seconds, no replay),
# and it is the fast suite's one check that `loadproof run` goes through Dagster and that a blocking
# check stops it. Its own spec (max_reject_rate 0) is what makes the check fail, so it cannot read
# the shared demo pack.
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


def test_a_failing_expectation_suite_explains_itself_in_the_cli(tmp_path, write_spec, zero_server, monkeypatch):
    """A blocking great-expectations suite that fails says which expectation, how many rows, an
    example request id and what to do, on the CLI (issue 16, item 7)."""
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    lines = DEMO_LOG.read_text().splitlines()
    backwards = tmp_path / "backwards.jsonl"  # every line a step back in time: the log's order is suspect
    backwards.write_text("\n".join(reversed(lines)) + "\n")
    spec = small_spec(write_spec, zero_server.base_url, log={"path": str(backwards), "format": "openai_jsonl"})
    result = CliRunner().invoke(app, ["run", str(spec), "--out", str(tmp_path / "pack")])
    assert result.exit_code == 1
    assert "production_logs_expectations" in result.output
    line = next(line for line in result.output.splitlines() if "arrival_at never decreases" in line)
    accepted = len(lines) - 2  # the demo log has 2 bad lines, quarantined
    failing = re.search(rf"(\d+) of {accepted} rows fail", line)
    assert failing and int(failing.group(1)) > accepted // 2  # (lines of one timestamp tie: not a step back)
    assert "request_id=req-" in line and "What to do:" in line


def test_bad_spec_exits_2_naming_the_field(tmp_path, write_spec):
    data = demo_spec_dict()
    data["sla"]["ttft_ms"] = -5
    result = CliRunner().invoke(app, ["run", str(write_spec(data)), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "sla.ttft_ms: Input should be greater than 0" in result.output


def test_the_ui_groups_are_the_asset_modules_and_the_docs_name_each():
    groups = {spec.group_name for spec in defs.resolve_all_asset_specs()}
    assert groups == {module.__name__.removeprefix("assets.") for module in ASSET_MODULES}
    listed = re.search(r"one module per group \(([^)]*)\)", (REPO_ROOT / "docs" / "new-model-version.md").read_text())
    assert listed and set(re.findall(r"`(\w+)`", listed.group(1))) == groups


def test_the_ui_command_opens_the_demos_instance_with_the_projects_dagster_yaml():
    """`make dev`, the docs' UI command (docs/new-model-version.md), copies dagster.yaml (telemetry off,
    one run at a time) into the instance it opens, the demo's, beside the launchpad's default pack folder."""
    makefile = (REPO_ROOT / "Makefile").read_text()
    home = re.search(r"^DEV_HOME \?= \$\(CURDIR\)/(\S+)$", makefile, re.MULTILINE)
    assert home and home.group(1) == "out/demo/.dagster"
    recipe = makefile.split("\ndev:", 1)[1].split("\n\n", 1)[0]
    assert "cp dagster.yaml $(DEV_HOME)/dagster.yaml" in recipe and "DAGSTER_HOME=$(DEV_HOME)" in recipe
    assert REPO_ROOT / home.group(1) == Path(defs.resources["storage"].out_dir) / ".dagster"
    ui = (REPO_ROOT / "docs" / "new-model-version.md").read_text().split("## Open the Dagster UI", 1)[1]
    assert ui.split("```bash\n", 1)[1].startswith("make dev ")
