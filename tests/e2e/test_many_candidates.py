"""Two candidates, one plan: both replayed, compared side by side and ranked by cost per decision."""

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference import ReferenceServer
from tests.support.specs import DEMO_SLICE, demo_spec_dict


@pytest.mark.slow
def test_two_candidates_share_the_plan_and_are_ranked(tmp_path, write_spec, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    perfect, coin = tmp_path / "perfect.yaml", tmp_path / "coin.yaml"
    perfect.write_text(f"answer_key: {DEMO_SLICE}\naccuracy: 1.0\n")
    coin.write_text(f"answer_key: {DEMO_SLICE}\naccuracy: 0.5\n")
    data = demo_spec_dict()
    data["workload"]["sample"].update(window_s=6)
    data["workload"]["replay"].update(warmup_s=1, cooldown_s=1, max_duration_s=60)
    data["accuracy"]["max_items"] = 60
    out = tmp_path / "pack"
    with ReferenceServer("zero", oracle=str(perfect)) as first, ReferenceServer("zero", oracle=str(coin)) as second:
        data["candidates"][0]["base_url"] = first.base_url
        data["candidates"][1]["base_url"] = second.base_url
        result = CliRunner().invoke(app, ["run", str(write_spec(data)), "--out", str(out)])
    assert result.exit_code == 0, result.output

    plan_rows = pq.read_metadata(out / "data" / "replay_plan.parquet").num_rows
    timings = pq.read_table(out / "data" / "raw_timings.parquet", columns=["candidate", "request_id"]).to_pylist()
    by_candidate = {
        name: sorted(r["request_id"] for r in timings if r["candidate"] == name)
        for name in ("fastserve-8b", "budget-8b")
    }
    assert len(by_candidate["fastserve-8b"]) == plan_rows and by_candidate["fastserve-8b"] == by_candidate["budget-8b"]

    pack = json.loads((out / "evidence_pack.json").read_text())
    assert sorted(pack["side_by_side"]["candidates"]) == ["budget-8b", "fastserve-8b"]
    assert [r["rank"] for r in pack["ranking"]] == [1, 2]
    costs = [r["cost_per_decision_usd"] for r in pack["ranking"]]
    assert costs == sorted(costs)
    accuracy = {a["candidate"]: a for a in pack["accuracy"]["summary"]}
    assert accuracy["fastserve-8b"]["accuracy"] == 1.0 and accuracy["fastserve-8b"]["scored"] == 60
    assert accuracy["budget-8b"]["accuracy"] < 0.8
    markdown = (out / "evidence_pack.md").read_text()
    assert "## Candidates side by side" in markdown and "### Ranking by cost per useful decision" in markdown
    assert "## Accuracy on the buyer's labelled slice" in markdown

    # each candidate's own pack lists the shared inputs' checks: the second candidate's run did
    # not re-plan, so it names the run that did; the side-by-side pack lists them once
    (first_run, second_run) = (p["run_id"] for p in pack["partitions"])
    budget = json.loads(next((out / "candidates" / "budget-8b").glob("*/evidence_pack.json")).read_text())
    borrowed = [row for row in budget["data_quality"] if row["asset"] == "replay_plan"]
    assert borrowed and {row["run_id"] for row in borrowed} == {first_run}
    assert budget["run_id"] == second_run
    plan_checks = [row for row in pack["data_quality"] if row["asset"] == "replay_plan"]
    assert len(plan_checks) == len(borrowed) and all(
        row["partition"].startswith("fastserve-8b|") for row in plan_checks
    )
