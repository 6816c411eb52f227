"""The arms in the session's demo pack (two candidates, the demo spec's `workload.replay.arms`):
every arm's rows in arm_timings, both pack sections for both candidates, the waterfall chart at the
top of the HTML, and `loadproof verify` re-computing every arm row."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.plan.arms import LADDER, VENDOR_CONDITIONS
from tests.support.demo_pack import CANDIDATES, DemoPack

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pack(demo_pack: DemoPack) -> dict:
    return json.loads((demo_pack.folder / "evidence_pack.json").read_text())


def test_every_arm_sent_its_requests_in_waves_for_every_candidate(demo_pack: DemoPack):
    """Sized in waves of the claim's concurrency (the first one warm-up): the vendor's arm 1 + waves, each
    ladder step 1 + ladder_waves; the claim's own count is the vendor's sample, not ours."""
    arms = demo_pack.spec["workload"]["replay"]["arms"]
    wave = demo_pack.spec["claim"]["conditions"]["concurrency"]
    expected = dict.fromkeys(LADDER, (1 + arms["ladder_waves"]) * wave) | {
        VENDOR_CONDITIONS: (1 + arms["waves"]) * wave
    }
    rows = pq.read_table(demo_pack.folder / "data" / "arm_timings.parquet", columns=["candidate", "arm"]).to_pylist()
    for candidate in CANDIDATES:
        counts = {arm: sum(1 for r in rows if (r["candidate"], r["arm"]) == (candidate, arm)) for arm in LADDER}
        assert counts == expected


def test_the_server_was_scraped_beside_every_arm(demo_pack: DemoPack):
    """Issue 18 item 2: the candidate's own /metrics beside each arm too, scoped by `arm` (the
    production replay's and the sweep levels' samples keep theirs)."""
    for candidate in CANDIDATES:
        (path,) = (demo_pack.folder / "candidates" / candidate).glob("*/data/server_metrics.parquet")  # one version
        table = pq.read_table(path, columns=["arm", "load_level"]).to_pylist()
        assert {row["arm"] for row in table if row["arm"] is not None} == set(LADDER), candidate
        assert any(row["arm"] is None and row["load_level"] is None for row in table)  # the production replay's


def test_both_sections_cover_every_candidate_and_claimed_figure(pack: dict, demo_pack: DemoPack):
    claimed = set(demo_pack.spec["claim"]["figures"]) - {"accuracy"}
    vendor = {(row["candidate"], row["metric"]) for row in pack["vendor_conditions"]}
    assert vendor == {(c, m) for c in CANDIDATES for m in claimed}
    assert {row["verdict"] for row in pack["vendor_conditions"]} <= {
        "holds",
        "holds within tolerance",
        "not reproduced",
        "inconclusive",
    }
    # the section and the figures say the same of each (a verdict is made once: the demo's section
    # had said "not reproduced" where the figure, over a window with no steady state, was inconclusive)
    at_vendor = {(f["candidate"], f["metric"]): f for f in pack["figures"] if f.get("basis") == "vendor_conditions"}
    for row in pack["vendor_conditions"]:
        figure = at_vendor[(row["candidate"], row["metric"])]
        assert (row["verdict"], row.get("no_steady_window")) == (figure["verdict"], figure.get("no_steady_window"))
    for row in pack["headline_waterfall"]:
        assert [step["arm"] for step in row["steps"]] == [*LADDER, None, None]
        assert row["steps"][-1]["axis"] == "production load" and row["steps"][-2]["axis"] == "capacity at SLA"
    assert {row["candidate"] for row in pack["headline_waterfall"]} == set(CANDIDATES)


def test_the_waterfall_leads_the_html_pack(demo_pack: DemoPack):
    html = (demo_pack.folder / "evidence_pack.html").read_text()
    assert html.index('id="headline-waterfall"') < html.index('id="summary"')
    waterfall = html[html.index('id="headline-waterfall"') : html.index('id="vendor-conditions"')]
    assert "<svg" in waterfall
    assert "## Headline waterfall" in (demo_pack.folder / "evidence_pack.md").read_text()


def test_verify_recomputes_the_arm_rows(demo_pack: DemoPack, tmp_path: Path):
    result = CliRunner().invoke(app, ["verify", str(demo_pack.folder)])
    assert result.exit_code == 0, result.output
    assert " arm rows" in result.output
