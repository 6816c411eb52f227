"""What a committee reads first (issue 42, item 5): on the demo's own pack (a reduced copy,
tests/fixtures/packs/), the five lines are summaries of at most 240 characters, at most three
reasons per candidate stand behind the proxy verdict on the first screen with where the rest are,
no interval is infinite on any page, each tolerance's source is stated once, in the glossary, and
the steady-state table never breaks a series name. No I/O beyond the fixture; no browser."""

from __future__ import annotations

import json
import re

import pytest

from pipeline import REPO_ROOT
from pipeline.analysis.declare import metrics
from pipeline.cli_output import print_headline
from pipeline.pack.assemble import claim_words, summary
from pipeline.pack.document import EvidencePack
from pipeline.pack.render.pages import open_end, render_html, render_markdown

DEMO = REPO_ROOT / "tests" / "fixtures" / "packs" / "demo_pack.json"


@pytest.fixture(scope="module")
def demo() -> dict:
    """The demo pack with its five lines and proxy verdict derived by the code under test."""
    pack = json.loads(DEMO.read_text(encoding="utf-8"))
    figures, waterfall = pack["figures"], pack["headline_waterfall"]
    pack["proxy_verdict"] = summary.measured_proxy_verdict(figures, waterfall, 1.25)
    pack["executive_summary"] = summary.executive_summary(figures, waterfall)
    return EvidencePack.model_validate(pack).document()  # the pack's own model: a line over the limit fails


@pytest.fixture(scope="module")
def pages(demo) -> dict[str, str]:
    return {"html": render_html(demo, {}, confidence=0.95), "markdown": render_markdown(demo, confidence=0.95)}


def test_each_of_the_five_lines_is_a_summary_of_at_most_240_characters(demo):
    assert [s["candidate"] for s in demo["executive_summary"]] == ["fastserve-8b", "budget-8b"]
    for entry in demo["executive_summary"]:
        assert len(entry["lines"]) == 5
        for line in entry["lines"]:
            assert len(line) <= claim_words.LINE_LIMIT == 240, line
            assert "tolerance" not in line and "∞" not in line, line  # the glossary's; never infinite
    fastserve = demo["executive_summary"][0]["lines"]
    # the claims counted by verdict, the one furthest from its claim named with the pack's numbers
    assert fastserve[0].startswith(
        "Claims at the vendor's own conditions: 5 of 6 claims not reproduced (worst TTFT p95 6,665 vs 250 ms claimed)"
    )
    assert fastserve[1].startswith("At your production load: 2 of 5 claims inconclusive")


def test_at_most_three_reasons_per_candidate_on_the_first_screen_and_where_the_rest_are(demo, pages):
    candidates = demo["proxy_verdict"]["candidates"]
    assert [len(c["reasons"]) for c in candidates] == [13, 13]  # the whole list stays in the JSON
    first = pages["html"].split('id="executive-summary"')[1].split("</section>")[0]
    shown = re.findall(r'<ul class="reasons">(.*?)</ul>', first, flags=re.S)
    assert len(shown) == 2
    for items, candidate in zip(shown, candidates, strict=True):
        reasons = re.findall(r"<li>(.*?)</li>", items)
        assert len(reasons) == summary.FIRST_REASONS == 3
        assert reasons[0].startswith("Output tokens/s: 4,200 tokens/s claimed")  # what failed, first
        assert f'and {len(candidate["reasons"]) - 3} more (see <a href="#proxy-verdict">section 4</a>)' in items
    markdown_first = pages["markdown"].split("## In five lines")[1].split("\n## ")[0]
    assert markdown_first.count('- and 10 more (see "Is the published figure a good-enough proxy?" below)') == 2
    assert len(re.findall(r"^- ", markdown_first, flags=re.M)) == 2 * 4


def test_no_page_prints_an_infinite_interval(pages, demo):
    assert any(f["ci_low"] is not None and f["ci_high"] is None for f in demo["figures"])  # open ends there are
    for text in pages.values():
        assert "∞" not in text
        assert "≥ " in text  # an open end keeps its bounded side
    assert pages["markdown"].count("An interval written ≥ x (or ≤ x) has one open end") == 2  # note, glossary
    # in the HTML, a figure's open end says why in the cell's title, in claim_words' words
    assert '<td class="num" title="its upper end not estimable from 187 requests">≥ 6,612</td>' in pages["html"]
    needed = {"ci_low": 2200.0, "ci_high": None, "n": 80, "requests_to_resolve": 368}
    assert open_end(needed) == "its upper end not estimable from 80 requests (368 needed)"
    assert open_end({"ci_low": None, "ci_high": 5.0, "n": 80}) == "its lower end not estimable from 80 requests"
    assert open_end({"ci_low": 1.0, "ci_high": 2.0}) == open_end({"ci_low": None, "ci_high": None}) == ""


def test_each_tolerance_source_is_stated_once_in_the_glossary(demo, pages):
    sources = {f["tolerance_source"] for f in demo["figures"] + demo["vendor_conditions"] if f.get("tolerance_source")}
    settings = {source.split(": ", 1)[0] for source in sources}
    assert settings == {
        f"{metrics.tolerance_setting(name)}, default"
        for name in ("ttft_ms_p95", "output_tokens_per_s", "error_rate", "accuracy")
    }
    html_glossary = pages["html"].split('id="definitions"')[1]
    markdown_glossary = pages["markdown"].split("## What each figure is")[1]
    for setting in settings:
        assert pages["html"].count(setting) == 1 and setting in html_glossary, setting
        assert pages["markdown"].count(setting) == 1 and setting in markdown_glossary, setting


def test_the_steady_state_table_never_breaks_a_series_name(pages):
    html = pages["html"]
    assert "#steady-state-table code, ul.tolerances code { word-break: normal; white-space: nowrap; }" in html
    table = html.split('<table id="steady-state-table">')[1].split("</table>")[0]
    assert table.count('<td class="tests"><div><code>') == 2


def test_a_line_longer_than_its_limit_is_cut_at_a_word():
    reason = "no load level met the SLA " + "because one request at a time already misses it " * 8
    tokens = {"candidate": "c", "metric": "output_tokens_per_s", "basis": metrics.CAPACITY_AT_SLA, "measured": None}
    line = summary.capacity_line({"output_tokens_per_s": tokens | {"reason": reason}})
    assert len(line) <= 240 and line.endswith("…") and line.startswith("Capacity at the SLA: unknown: no load level")
    assert claim_words.fit("a " * 200) == ("a " * 119).strip() + "…"
    assert claim_words.fit("head", "; one", "; " + "x" * 300) == "head; one"


def test_the_cli_headline_never_prints_an_infinite_or_dashed_interval_end(demo, capsys):
    print_headline(demo, 0.95)
    printed = capsys.readouterr().out
    assert "TTFT" in printed or "ttft_ms_p95" in printed
    assert "∞" not in printed and "– —" not in printed and "≥" in printed
