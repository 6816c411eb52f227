"""`loadproof init` then `loadproof run` (issue 27, item 5): the spec init writes for the bundled log
and the reference endpoint is run as written, end to end, into a pack whose claimed figure (the
stub: the log's own p95 latency) has a verdict, and the window the run drew is the one the spec's
comment names. Small: a 10 s window, at most 30 requests."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.spec import load_spec
from tests.support.specs import DEMO_LOG


@pytest.mark.slow
def test_the_spec_init_writes_runs_as_written(zero_server, tmp_path, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    spec_path, pack = tmp_path / "spec.yaml", tmp_path / "pack"
    written = CliRunner().invoke(
        app,
        [
            "init",
            str(DEMO_LOG),
            "--target",
            zero_server.base_url,
            "--out",
            str(spec_path),
            "--window-s",
            "10",
            "--max-requests",
            "30",
        ],
    )
    assert written.exit_code == 0, written.output
    spec = load_spec(spec_path).spec
    assert spec.claim.figures.keys() == {"e2e_ms_p95"} and spec.sla.e2e_ms is not None

    result = CliRunner().invoke(app, ["run", str(spec_path), "--out", str(pack)])
    assert result.exit_code == 0, result.output
    document = json.loads((pack / "evidence_pack.json").read_text())
    claimed = [figure for figure in document["figures"] if figure["claimed"] is not None]
    assert [(f["candidate"], f["metric"]) for f in claimed] == [("reference-model", "e2e_ms_p95")]
    assert claimed[0]["verdict"] in {"holds", "holds within tolerance", "not reproduced", "inconclusive"}
    window = json.loads((pack / "data" / "production_sample.json").read_text())
    start = dt.datetime.fromisoformat(window["window_start"]).isoformat(timespec="milliseconds")
    assert window["window_s"] == 10
    assert f"requests from {start.replace('+00:00', 'Z')} to" in spec_path.read_text()  # the window init named


@pytest.mark.slow
def test_a_spec_with_auto_shards_runs_its_shared_inputs_first_then_one_process_at_this_load(
    zero_server, tmp_path, monkeypatch
):
    """`workload.replay.shards: auto` on an open loop (no bound on streams in flight known before the
    plan): `loadproof run` makes the shared inputs first, sizes the shards from the written plan and
    profile (about 14 in flight here: one process), and runs the partition in its own process as
    `shards: 1` does — a whole pack, replayed by one shard."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    spec_path, pack = tmp_path / "spec.yaml", tmp_path / "pack"
    args = ["init", str(DEMO_LOG), "--target", zero_server.base_url, "--out", str(spec_path)]
    written = CliRunner().invoke(app, [*args, "--window-s", "10", "--max-requests", "30"])
    assert written.exit_code == 0, written.output
    text = spec_path.read_text()
    assert "    shards: 1 " in text
    spec_path.write_text(text.replace("    shards: 1 ", "    shards: auto "))
    assert load_spec(spec_path).spec.workload.replay.shards == "auto"

    result = CliRunner().invoke(app, ["run", str(spec_path), "--out", str(pack)])
    assert result.exit_code == 0, result.output
    assert (pack / "evidence_pack.json").is_file()
    summary = json.loads((pack / "data" / "replay_summary.json").read_text())
    assert [shard["shard"] for shard in summary["shards"]] == [0] and summary["sent"] == summary["planned"] > 0
