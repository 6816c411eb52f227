"""The auditor's path (issue 29 item 7): from a figure in the HTML pack, through its link, to the
same value, verdict and raw-timings sha256 in the Dagster UI, in headless Chromium (the system's,
tests/support/chromium.py) against `dagster dev` on a copy of the demo pack's instance.

The clicks are counted from the figure's lineage row to the raw-timings hash on screen:
1. "in Dagster" on the figure's lineage row: the `figures` asset at the figure's partition, with
   its verdicts (keyed candidate/metric/basis) and the run that wrote it;
2. "[Show Markdown]" on its `figures` metadata: every figure of the partition with its value,
   interval, verdict and the sha256 of each input file, the raw timings first.
A screenshot of each step is kept (`LOADPROOF_AUDITOR_PATH_DIR`, else the test's tmp dir);
docs/auditor-path/ holds the ones docs/auditor.md shows.

The same UI lists the runs `loadproof run` made under the code location (issue 29 item 5), as its
Overview timeline and each asset's history read them (their GraphQL fields), and from the
side-by-side pack's *combined inputs* link the combined raw timings' sha256 is one click away."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import httpx
import pytest

from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL
from pipeline.pack.render.pages import num
from tests.support import chromium
from tests.support.dagster_dev import DagsterDevDidNotStart, dagster_dev
from tests.support.demo_pack import CANDIDATES, INSTANCE_GROUP, DemoPack

# copies the pack's Dagster instance: never beside another test that opens it
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(INSTANCE_GROUP)]
needs_chromium = pytest.mark.skipif(chromium.skip_reason() is not None, reason=str(chromium.skip_reason()))

MOST_CLICKS = 3  # issue 29: from the number on the page to its raw timings' hash
FIGURE = (CANDIDATES[0], "ttft_ms_p95", "production_load")  # the example
RAW = "data/raw_timings.parquet"


@pytest.fixture(scope="module")
def ui(demo_pack: DemoPack, tmp_path_factory) -> str:
    """`dagster dev` on a copy of the demo pack's instance (it writes to its instance)."""
    home = tmp_path_factory.mktemp("auditor") / "dagster_home"
    shutil.copytree(demo_pack.folder / ".dagster", home)
    try:
        with dagster_dev(home) as url:
            # the community sign-up a first visit shows is the UI's own, not the auditor's path
            httpx.post(f"{url}/graphql", json={"query": "mutation { setNuxSeen }"}, timeout=30)
            yield url
    except DagsterDevDidNotStart as exc:
        pytest.skip(f"dagster dev could not start here: {exc}")


@needs_chromium
def test_one_figure_from_the_pack_to_its_raw_timings_hash_in_the_ui(demo_pack: DemoPack, ui: str, tmp_path):
    from playwright.sync_api import sync_playwright

    shots = Path(os.environ.get("LOADPROOF_AUDITOR_PATH_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    top = json.loads((demo_pack.folder / "evidence_pack.json").read_text())
    run = next(p for p in top["partitions"] if p["candidate"] == FIGURE[0])
    folder = demo_pack.folder / "candidates" / run["candidate"] / run["model_version"]
    pack = json.loads((folder / "evidence_pack.json").read_text())
    index, figure = next(
        (i, f) for i, f in enumerate(pack["figures"]) if (f["candidate"], f["metric"], f["basis"]) == FIGURE
    )
    raw_sha256 = next(ref["sha256"] for ref in figure["lineage"]["inputs"] if ref["path"] == RAW)
    link = figure["lineage"]["dagster"]
    assert link["partition"] == f"{run['candidate']}|{run['model_version']}" and link["run_id"] == run["run_id"]
    # the side-by-side pack links the same figure to the same place, and its combined inputs too
    same = next(f for f in top["figures"] if (f["candidate"], f["metric"], f["basis"]) == FIGURE)
    same_link = dict(same["lineage"]["dagster"])
    assert same_link.pop("combined_url") == f"{DEFAULT_UI_URL}/assets/candidate_comparison"
    assert same_link == link and "combined_url" not in link

    clicks = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium.chromium_path(), args=chromium.ARGS, timeout=chromium.TIMEOUT_MS
        )
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 900})
            page.set_default_timeout(chromium.TIMEOUT_MS)
            page.goto((folder / "evidence_pack.html").resolve().as_uri())
            row = page.locator("#lineage-table tbody tr").nth(index)
            row.scroll_into_view_if_needed()
            assert row.locator("code").first.inner_text() == figure["metric"]
            assert raw_sha256 in row.inner_text()  # the pack's own hash, on its lineage row
            assert num(figure["measured"]) in page.locator("#summary").inner_text()
            # the pack was written for `make dev`'s address; this UI listens on a free port
            anchor = row.locator("a.ui-link")
            assert anchor.get_attribute("href") == link["url"] and link["url"].startswith(DEFAULT_UI_URL)
            anchor.evaluate("(a, url) => { a.href = url; }", link["url"].replace(DEFAULT_UI_URL, ui, 1))
            row.screenshot(path=str(shots / "1-pack-lineage-row.png"))

            anchor.click()  # click 1: the figures asset at the figure's partition
            clicks += 1
            metadata = page.locator("td").filter(has_text=re.compile(r"^\s*figures\s*$")).locator("xpath=..").first
            metadata.wait_for()
            shown = page.inner_text("body")
            assert link["partition"] in shown and run["run_id"][:8] in shown  # its partition, the run that wrote it
            key = "/".join(FIGURE)
            assert f'"{key}": "{figure["verdict"]}"' in shown  # the verdicts, one per basis
            page.screenshot(path=str(shots / "2-figures-partition.png"))

            metadata.get_by_text("[Show Markdown]").click()  # click 2: every figure with its hashes
            clicks += 1
            dialog = page.get_by_role("dialog")
            shown_row = dialog.locator("tr", has_text=FIGURE[1]).filter(has_text=FIGURE[2]).first
            shown_row.wait_for()
            cells = shown_row.locator("td")
            values = [cells.nth(i).inner_text().strip() for i in range(cells.count())]
            candidate, metric, basis, _claimed, measured, _interval, n, verdict, lineage = values
            assert (candidate, metric, basis) == FIGURE
            assert measured == f"{figure['measured']:.6g} {figure['unit']}"  # the value the pack shows
            assert (int(n), verdict) == (figure["n"], figure["verdict"])
            assert f"{RAW} {raw_sha256}" in lineage  # the raw timings' hash the pack names
            cells.nth(8).scroll_into_view_if_needed()  # the dialog scrolls sideways: the hashes in view
            page.screenshot(path=str(shots / "3-figure-and-raw-timings-hash.png"))
        finally:
            browser.close()
    assert clicks <= MOST_CLICKS
    assert clicks == 2  # the path as documented in docs/auditor.md


# the fields the UI's Overview timeline (RunTimelineFragment) and an asset's history
# (AssetSuccessfulMaterializationFragment) read of a run: a run without `repositoryOrigin` is left off the timeline
ORIGIN = "repositoryOrigin { repositoryName repositoryLocationName }"
RUNS = f"{{ runsOrError {{ ... on Runs {{ results {{ id pipelineName runConfig {ORIGIN} }} }} }} }}"
HISTORY = f"""query History($key: AssetKeyInput!) {{ assetOrError(assetKey: $key) {{ ... on Asset {{
    assetMaterializations(limit: 20) {{ partition runOrError {{ ... on Run {{ id {ORIGIN} }} }} }} }} }} }}"""
LOCATIONS = "{ workspaceOrError { ... on Workspace { locationEntries { name } } } }"
# the launchpad's check of a run config against the code location's job (a re-execution runs with the parent's)
VALID = """query Valid($job: PipelineSelector!, $config: RunConfigData!) {
    isPipelineConfigValid(pipeline: $job, mode: "default", runConfigData: $config) { __typename } }"""


def _graphql(url: str, query: str, **variables) -> dict:
    response = httpx.post(f"{url}/graphql", json={"query": query, "variables": variables}, timeout=60)
    body = response.json()
    assert "errors" not in body, body["errors"]
    return body["data"]


def test_the_cli_runs_show_under_the_code_location_in_the_timeline_and_asset_history(demo_pack: DemoPack, ui: str):
    """Issue 29 item 5: the runs `loadproof run` made (one per partition, then the comparison)
    carry the code location the UI loaded, so its timeline and the assets' history list them."""
    (location,) = [entry["name"] for entry in _graphql(ui, LOCATIONS)["workspaceOrError"]["locationEntries"]]
    under_location = {"repositoryName": "__repository__", "repositoryLocationName": location}
    top = json.loads((demo_pack.folder / "evidence_pack.json").read_text())
    partition_runs = {p["run_id"] for p in top["partitions"]}
    runs = {run["id"]: run for run in _graphql(ui, RUNS)["runsOrError"]["results"]}
    assert set(runs) == partition_runs | {top["run_id"], top["lineage"]["plan_run_id"]}  # + the plan run (side by side)
    job = {"repositoryLocationName": location, "repositoryName": "__repository__", "pipelineName": "revalidation"}
    for run in runs.values():
        assert (run["pipelineName"], run["repositoryOrigin"]) == ("revalidation", under_location), run
        # its run config (the CLI's spec, pack folder, base URLs) is one the code location's job takes
        valid = _graphql(ui, VALID, job=job, config=run["runConfig"])["isPipelineConfigValid"]
        assert valid["__typename"] == "PipelineConfigValidationValid", valid
    for asset, written_by in (("raw_timings", partition_runs), ("candidate_comparison", {top["run_id"]})):
        history = _graphql(ui, HISTORY, key={"path": [asset]})["assetOrError"]["assetMaterializations"]
        assert {event["runOrError"]["id"] for event in history} == written_by
        assert all(event["runOrError"]["repositoryOrigin"] == under_location for event in history)


def test_the_combined_raw_timings_hash_is_on_the_comparison_assets_metadata(demo_pack: DemoPack, ui: str):
    """Issue 29: the side-by-side pack's figures were read from the combined raw timings (every
    partition's rows), not a partition's file. Its lineage rows link `candidate_comparison`
    (`combined_url`), whose latest materialisation names that file with the sha256 the pack names,
    as an entry of its own (no JSON to open)."""
    top = json.loads((demo_pack.folder / "evidence_pack.json").read_text())
    figure = next(f for f in top["figures"] if (f["candidate"], f["metric"], f["basis"]) == FIGURE)
    raw_sha256 = next(ref["sha256"] for ref in figure["lineage"]["inputs"] if ref["path"] == RAW)
    assert figure["lineage"]["dagster"]["combined_url"] == f"{DEFAULT_UI_URL}/assets/candidate_comparison"
    query = """query Latest($key: AssetKeyInput!) { assetOrError(assetKey: $key) { ... on Asset {
        assetMaterializations(limit: 1) { runId metadataEntries { label ... on TextMetadataEntry { text } } } } } }"""
    (latest,) = _graphql(ui, query, key={"path": ["candidate_comparison"]})["assetOrError"]["assetMaterializations"]
    entries = {entry["label"]: entry.get("text") for entry in latest["metadataEntries"]}
    assert latest["runId"] == top["run_id"] and entries[RAW] == raw_sha256
