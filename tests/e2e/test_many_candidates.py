"""Two candidates, one plan: both replayed, compared side by side and ranked by cost per decision
(read from the session's demo pack: fastserve-8b's endpoint answers every labelled item right,
budget-8b's half of them)."""

import json

import pyarrow.parquet as pq
import pytest

from tests.support.demo_pack import SLICE_ITEMS, DemoPack

pytestmark = pytest.mark.slow


def test_two_candidates_share_the_plan_and_are_ranked(demo_pack: DemoPack):
    out = demo_pack.folder
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
    assert accuracy["fastserve-8b"]["accuracy"] == 1.0 and accuracy["fastserve-8b"]["scored"] == SLICE_ITEMS
    assert accuracy["budget-8b"]["accuracy"] < 0.8
    markdown = (out / "evidence_pack.md").read_text()
    assert "## Candidates side by side" in markdown and "### Ranking by cost per useful decision" in markdown
    assert "## Accuracy on the buyer's labelled slice" in markdown

    # the candidates were measured side by side after a plan run of their own: each candidate's
    # own pack lists the shared inputs' checks with the run that made them; the side-by-side pack
    # lists them once, with that run
    plan_run = pack["lineage"]["plan_run_id"]
    (first_run, second_run) = (p["run_id"] for p in pack["partitions"])
    assert plan_run not in (first_run, second_run)
    budget = json.loads(next((out / "candidates" / "budget-8b").glob("*/evidence_pack.json")).read_text())
    borrowed = [row for row in budget["data_quality"] if row["asset"] == "replay_plan"]
    assert borrowed and {row["run_id"] for row in borrowed} == {plan_run}
    assert budget["run_id"] == second_run
    plan_checks = [row for row in pack["data_quality"] if row["asset"] == "replay_plan"]
    assert len(plan_checks) == len(borrowed) and all(
        row["run_id"] == plan_run and "partition" not in row for row in plan_checks
    )
