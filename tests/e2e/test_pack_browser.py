"""The session's demo pack as a reader sees it in headless Chromium: the top pack and a
candidate's own pack, every section opened, nothing broken (tests/support/chromium.py says what
"broken" means), a full-page screenshot kept in the test's tmp dir."""

import json
from collections import defaultdict
from pathlib import Path

import pytest

from pipeline.pack.render.pages import render_html
from tests.support import chromium
from tests.support.demo_pack import CANDIDATES, DemoPack

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium.skip_reason() is not None, reason=str(chromium.skip_reason())),
]

SECTIONS = [
    "decision",  # per candidate a bottom line and its claims' verdicts, then the recommendation
    "executive-summary",  # five lines per candidate, read first
    "headline-waterfall",  # the arms (workload.replay.arms): the headline walked to the buyer's load
    "vendor-conditions",
    "summary",
    "comparison",
    "accuracy",
    "conditions",
    "workload",
    "latency",
    "reply-mix",  # reasoning, tool calls and structured output (the demo's budget-8b reasons)
    "bill-check",  # billed vs counted tokens
    "throughput",
    "sweep",
    "validity",
    "definitions",  # what each figure is: the metric catalogue's glossary
    "lineage",
]


def candidate_pack(folder: Path) -> Path:
    """The first candidate's own pack, at the version it was measured at."""
    partition = json.loads((folder / "evidence_pack.json").read_text())["partitions"][0]
    assert partition["candidate"] == CANDIDATES[0]
    return folder / "candidates" / partition["candidate"] / partition["model_version"] / "evidence_pack.html"


@pytest.mark.parametrize(
    ("which", "sections"),
    [("top", SECTIONS), ("candidate", [*SECTIONS[:5], "history", *SECTIONS[5:]])],
)
def test_the_pack_renders_cleanly_in_chromium(demo_pack: DemoPack, which, sections, tmp_path):
    page = demo_pack.folder / "evidence_pack.html" if which == "top" else candidate_pack(demo_pack.folder)
    screenshot = tmp_path / f"evidence_pack_{which}.png"
    seen = chromium.audit(page, screenshot=screenshot)
    assert seen.sections == sections
    assert seen.problems() == [], f"screenshot: {screenshot}"
    assert seen.requests == [page.resolve().as_uri()]  # self-contained: the page asked for nothing else
    assert screenshot.stat().st_size > 50_000


def test_the_summary_table_holds_figures_far_wider_than_the_demos(demo_pack: DemoPack, tmp_path):
    """The summary has ten columns; a run's own numbers must not decide whether it fits (a CI run
    once squeezed every figure's name into 79 px because its intervals came out a little wider).
    Every claimed figure is given a claim in millions, a measurement in ten-thousandths and an
    interval spanning both, and the table still fits the page with no name broken."""
    pack = json.loads((demo_pack.folder / "evidence_pack.json").read_text())
    claimed = [figure for figure in pack["figures"] if figure["claimed"] is not None]
    assert claimed
    for figure in claimed:
        figure.update(claimed=4_200_000.0, measured=0.000123, ci_low=0.000101, ci_high=12_345_678.0, n=123_456)
    page = tmp_path / "evidence_pack_widest.html"
    page.write_text(render_html(pack, defaultdict(lambda: None), confidence=0.95))
    seen = chromium.audit(page, screenshot=tmp_path / "evidence_pack_widest.png")
    assert "summary" in seen.sections
    assert seen.problems() == []
