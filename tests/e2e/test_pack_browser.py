"""The session's demo pack as a reader sees it in headless Chromium: the top pack and a
candidate's own pack, every section opened, nothing broken (tests/support/chromium.py says what
"broken" means), a full-page screenshot kept in the test's tmp dir."""

import json
from pathlib import Path

import pytest

from tests.support import chromium
from tests.support.demo_pack import CANDIDATES, DemoPack

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium.skip_reason() is not None, reason=str(chromium.skip_reason())),
]

SECTIONS = [
    "executive-summary",  # five lines per candidate, read first
    "headline-waterfall",  # the arms (workload.replay.arms): the headline walked to the buyer's load
    "vendor-conditions",
    "summary",
    "comparison",
    "accuracy",
    "conditions",
    "workload",
    "latency",
    "throughput",
    "sweep",
    "validity",
    "lineage",
]


def candidate_pack(folder: Path) -> Path:
    """The first candidate's own pack, at the version it was measured at."""
    partition = json.loads((folder / "evidence_pack.json").read_text())["partitions"][0]
    assert partition["candidate"] == CANDIDATES[0]
    return folder / "candidates" / partition["candidate"] / partition["model_version"] / "evidence_pack.html"


@pytest.mark.parametrize(
    ("which", "sections"),
    [("top", SECTIONS), ("candidate", [*SECTIONS[:4], "history", *SECTIONS[4:]])],
)
def test_the_pack_renders_cleanly_in_chromium(demo_pack: DemoPack, which, sections, tmp_path):
    page = demo_pack.folder / "evidence_pack.html" if which == "top" else candidate_pack(demo_pack.folder)
    screenshot = tmp_path / f"evidence_pack_{which}.png"
    seen = chromium.audit(page, screenshot=screenshot)
    assert seen.sections == sections
    assert seen.problems() == [], f"screenshot: {screenshot}"
    assert seen.requests == [page.resolve().as_uri()]  # self-contained: the page asked for nothing else
    assert screenshot.stat().st_size > 50_000
