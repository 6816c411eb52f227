"""The decision block (issue 42, item 5): how far each judged figure is from its claim (made in
analysis), each candidate's bottom line (at most 240 characters) and decided share, the
recommendation across candidates (the no-candidate case too), rendered first in HTML and Markdown,
printed by the CLI, re-derived by `loadproof verify`. On the demo's own pack (a reduced copy,
tests/fixtures/packs/) and on hand-built figures; a first-screen check in Chromium where there is one."""

from __future__ import annotations

import json
import math

import pytest

from pipeline import REPO_ROOT
from pipeline.analysis.judge.how_far import HOW_FAR_COLUMNS, decided_share, how_far, with_how_far
from pipeline.cli_output import print_decision
from pipeline.pack.assemble import decision, summary
from pipeline.pack.audit.verify import Verification, _rederive_summary
from pipeline.pack.document import EvidencePack
from pipeline.pack.render.pages import render_html, render_markdown
from tests.support import chromium

DEMO = REPO_ROOT / "tests" / "fixtures" / "packs" / "demo_pack.json"


def _pack_figures(figures: list[dict]) -> list[dict]:
    """The figures as the pack holds them: how far from the claim as analysis writes it, a key
    with no value absent (`figures_table.figures_from_table`)."""
    return [{k: v for k, v in f.items() if not (k in HOW_FAR_COLUMNS and v is None)} for f in with_how_far(figures)]


@pytest.fixture(scope="module")
def demo() -> dict:
    """The demo pack with its figures' how-far columns and its decision block derived by the code under test."""
    pack = json.loads(DEMO.read_text(encoding="utf-8"))
    pack["figures"] = _pack_figures(pack["figures"])
    pack["decision"] = decision.decision_block(pack["figures"])
    pack["proxy_verdict"] = summary.measured_proxy_verdict(pack["figures"], pack["headline_waterfall"], 1.25)
    pack["executive_summary"] = summary.executive_summary(pack["figures"], pack["headline_waterfall"])
    return EvidencePack.model_validate(pack).document()  # the pack's own model: a bottom line over 240 fails


def _figure(candidate: str, metric: str, basis: str, claimed, measured, verdict, unit: str = "ms") -> dict:
    return {
        "candidate": candidate,
        "metric": metric,
        "basis": basis,
        "unit": unit,
        "claimed": claimed,
        "measured": measured,
        "ci_low": None if measured is None else measured * 0.9,
        "ci_high": None if measured is None else measured * 1.1,
        "verdict": verdict,
    }


def _cost(candidate: str, usd: float | None) -> dict:
    return _figure(candidate, "cost_per_decision_usd", "production_load", None, usd, None, "USD")


def test_how_far_is_measured_over_claimed_and_the_percent_from_the_claim():
    times, percent = how_far(412.0, 250.0)
    assert math.isclose(times, 1.648) and math.isclose(percent, 64.8)
    assert how_far(None, 250.0) == how_far(412.0, None) == how_far(412.0, 0.0) == (None, None)
    judged, unclaimed, served = with_how_far(
        [
            _figure("a", "ttft_ms_p95", "production_load", 250.0, 200.0, "holds"),
            _figure("a", "ttft_ms_p99", "production_load", None, 300.0, None),
            _figure("a", "output_tokens_per_s", "production_load", 4200.0, 170.0, None, "tokens/s"),  # served demand
        ]
    )
    assert judged["times_claimed"] == 0.8 and math.isclose(judged["percent_from_claim"], -20.0)
    for other in (unclaimed, served):
        assert other["times_claimed"] is None and other["percent_from_claim"] is None


def test_the_decided_share_counts_holds_within_tolerance_and_not_reproduced_over_judged_claims():
    verdicts = ["holds", "holds within tolerance", "not reproduced", "inconclusive", None]
    assert decided_share(verdicts) == (3, 4, 0.75)  # None: not judged, counted in neither
    assert decided_share([]) == decided_share([None]) == (0, 0, None)


def test_each_bottom_line_says_the_verdicts_and_the_worst_claim_within_240_characters(demo):
    fastserve, budget = demo["decision"]["candidates"]
    assert [fastserve["candidate"], budget["candidate"]] == ["fastserve-8b", "budget-8b"]
    assert fastserve["bottom_line"].startswith(
        "fastserve-8b: 3 of 13 claims hold; 5 not reproduced (worst TTFT p95 6,665 vs 250 ms claimed at the "
        "vendor's conditions, 26.7×); 5 inconclusive; carries 8× your load at your SLA"
    )
    assert budget["bottom_line"].startswith("budget-8b: 0 of 13 claims hold; 8 not reproduced (worst TTFT p95 16,682")
    for entry in (fastserve, budget):
        assert len(entry["bottom_line"]) <= 240
        assert (entry["decided"], entry["judged"]) == (8, 13)
        assert math.isclose(entry["decided_share"], 8 / 13)
    long_name = "a-candidate-whose-name-goes-on-" * 3
    figures = [_figure(long_name, "ttft_ms_p95", "vendor_conditions", 250.0, 6665.0, "not reproduced")]
    figures += [
        _figure(long_name, "e2e_ms_p99", "production_load", 4000.0, 3000.0, "inconclusive"),
        _cost(long_name, 1e-4),
    ]
    line = decision.bottom_line(long_name, decision.judged_claims(_pack_figures(figures), long_name), figures)
    assert len(line) <= 240 and line.startswith(f"{long_name}: 0 of 2 claims hold; 1 not reproduced")
    assert "USD" not in line  # the least important part left out first


def test_each_claim_row_is_the_figures_own_numbers_with_how_far(demo):
    rows = demo["decision"]["candidates"][0]["claims"]
    assert len(rows) == 13 and all(row["verdict"] for row in rows)
    ttft = next(r for r in rows if r["metric"] == "ttft_ms_p95" and r["basis"] == "vendor_conditions")
    figure = next(
        f
        for f in demo["figures"]
        if f["candidate"] == "fastserve-8b" and f["metric"] == "ttft_ms_p95" and f["basis"] == "vendor_conditions"
    )
    assert ttft["interval"] == [figure["ci_low"], None]  # an open end stays open
    assert math.isclose(ttft["times_claimed"], 6665.04 / 250) and math.isclose(ttft["percent_from_claim"], 2566.016)
    assert decision.times_words(ttft["times_claimed"]) == "26.7×"
    assert decision.percent_words(ttft["percent_from_claim"]) == "+2,566 %"
    assert decision.percent_words(-3.3) == "−3.3 %" and decision.times_words(None) == "—"


def test_the_recommendation_is_the_only_candidate_not_refuted_at_your_load(demo):
    recommendation = demo["decision"]["recommendation"]
    assert recommendation["candidate"] == "fastserve-8b"
    assert recommendation["cost_per_decision_usd"] == 0.000399017  # the figure's own value
    assert recommendation["reason"].startswith(
        "the only candidate none of whose claims is refuted at your load (budget-8b:"
    )
    assert recommendation["line"].startswith("Recommendation: fastserve-8b, 0.399 USD per 1,000 useful decisions")
    assert len(recommendation["line"]) <= 240


def test_the_recommendation_ranks_the_candidates_not_refuted_by_cost_and_ignores_the_vendors_conditions():
    figures = [
        _figure("dear", "ttft_ms_p95", "production_load", 250.0, 100.0, "holds"),
        _cost("dear", 4e-4),
        _figure("cheap", "ttft_ms_p95", "production_load", 250.0, 200.0, "holds within tolerance"),
        _figure("cheap", "ttft_ms_p95", "vendor_conditions", 250.0, 900.0, "not reproduced"),  # not your load
        _cost("cheap", 1e-4),
        _figure("refuted", "ttft_ms_p95", "capacity_at_sla", 250.0, 600.0, "not reproduced"),
        _cost("refuted", 1e-5),  # cheapest, but refuted at your SLA
    ]
    recommendation = decision.decision_block(_pack_figures(figures))["recommendation"]
    assert recommendation["candidate"] == "cheap" and recommendation["cost_per_decision_usd"] == 1e-4
    assert recommendation["reason"] == (
        "the lowest cost per useful decision among the 2 candidates none of whose claims is refuted at your load; "
        "next dear at 0.4 USD per 1,000 useful decisions"
    )


def test_a_throughput_claim_short_at_your_sla_rules_out_only_a_candidate_that_cannot_carry_your_load():
    """The vendor's tokens/s not reached at your SLA: a candidate that still carries your load there
    stays in (its measured cost per useful decision prices the shortfall), and the reason says so;
    one that carries less than your load is out."""

    def capacity(candidate: str, carries: float) -> list[dict]:
        claim = _figure(candidate, "output_tokens_per_s", "capacity_at_sla", 4200.0, 1480.0, "not reproduced")
        return [claim, _figure(candidate, "capacity_fraction", "capacity_at_sla", None, carries, None, "×")]

    figures = [*capacity("roomy", 8.0), _cost("roomy", 4e-4), *capacity("cramped", 0.5), _cost("cramped", 1e-4)]
    recommendation = decision.decision_block(_pack_figures(figures))["recommendation"]
    assert recommendation["candidate"] == "roomy"
    assert recommendation["reason"].startswith(
        "the only candidate none of whose claims is refuted at your load (cramped:"
    )
    assert recommendation["reason"].endswith(
        "; its Output tokens/s falls short at your SLA, yet it carries 8× your load there"
    )
    assert len(recommendation["line"]) <= 240


def test_no_candidate_when_every_one_is_refuted_at_your_load_or_none_is_priced():
    refuted = [
        _figure("a", "ttft_ms_p95", "production_load", 250.0, 600.0, "not reproduced"),
        _cost("a", 1e-4),
        _figure("b", "accuracy", "production_load", 0.92, 0.80, "not reproduced", "fraction"),
        _cost("b", 2e-4),
    ]
    recommendation = decision.decision_block(_pack_figures(refuted))["recommendation"]
    assert recommendation["candidate"] is None and recommendation["cost_per_decision_usd"] is None
    assert recommendation["reason"].startswith(
        "no candidate: every candidate has a claim not reproduced at your load (a: "
    )
    assert "; b: Accuracy 0.8 vs 0.92 claimed at your load, 0.87×)" in recommendation["reason"]
    alone = decision.decision_block(_pack_figures(refuted[:2]))["recommendation"]
    assert alone["candidate"] is None
    assert alone["reason"] == (
        "no candidate: the only candidate has a claim not reproduced at your load "
        "(a: TTFT p95 600 vs 250 ms claimed at your load, 2.4×)"
    )
    unpriced = [_figure("a", "ttft_ms_p95", "production_load", 250.0, 100.0, "holds"), _cost("a", None)]
    reason = decision.decision_block(_pack_figures(unpriced))["recommendation"]["reason"]
    assert reason == "no candidate: no cost per useful decision was measured for a"


def test_html_and_markdown_show_the_decision_first_with_each_claims_table(demo):
    html = render_html(demo, {}, confidence=0.95)
    assert html.index('<section id="decision">') < html.index('<section id="executive-summary">')
    block = html.split('<section id="decision">')[1].split("</section>")[0]
    assert block.count('<table class="decision-table"') == 2 and block.count('<tr class="place">') == 8
    assert '<td class="num">26.7×</td><td class="num">+2,566 %</td>' in block
    assert "Decided: 8 of 13 judged claims (62 %)." in block
    assert 'id="recommendation"><strong>Recommendation: fastserve-8b' in block
    markdown = render_markdown(demo, confidence=0.95)
    assert markdown.index("## Decision") < markdown.index("## In five lines")
    assert (
        "| TTFT p95 | vendor's conditions | 250.0 ms | 6,665 | ≥ 6,612 | not reproduced | 26.7× | +2,566 % |"
        in markdown
    )
    assert (
        "| Accuracy | the labelled slice | 0.92 | 0.89 | 0.839 – 0.926 | inconclusive | 0.967× | −3.3 % |" in markdown
    )
    assert "**Recommendation: fastserve-8b, 0.399 USD per 1,000 useful decisions" in markdown


def test_the_cli_prints_the_decision_table_and_the_recommendation(demo, capsys):
    print_decision(demo)
    printed = capsys.readouterr().out
    assert "Decision" in printed and "26.7×" in printed and "not reproduced" in printed
    assert "fastserve-8b: 3 of 13 claims hold" in printed
    assert printed.rstrip().splitlines()[-1].startswith("Recommendation: fastserve-8b")
    print_decision({})  # a pack written before the block: nothing
    assert capsys.readouterr().out == ""


def test_verify_derives_the_decision_again_and_names_an_edited_one(demo):
    pack = json.loads(json.dumps({"figures": demo["figures"], "decision": demo["decision"]}))  # as read from disk
    result = Verification()
    _rederive_summary(pack, None, result)
    assert result.problems == []
    pack["decision"]["recommendation"]["candidate"] = "budget-8b"
    _rederive_summary(pack, None, result)
    assert result.problems == ["decision: differs from the decision block derived from the figures again"]


@pytest.mark.skipif(chromium.skip_reason() is not None, reason=str(chromium.skip_reason()))
def test_the_decision_is_on_the_first_screen_of_a_1400_by_1000_window(demo, tmp_path):
    from playwright.sync_api import sync_playwright

    page_path = tmp_path / "evidence_pack.html"
    page_path.write_text(render_html(demo, {}, confidence=0.95), encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium.chromium_path(), args=chromium.ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            bottoms = page.eval_on_selector_all(
                "table.decision-table, #recommendation", "nodes => nodes.map(n => n.getBoundingClientRect().bottom)"
            )
            visible = page.locator("#recommendation").is_visible()
        finally:
            browser.close()
    assert len(bottoms) == 3 and visible
    assert max(bottoms) <= 1000, bottoms


def test_a_candidate_with_no_claim_judged_has_no_decided_share():
    (entry,) = (block := decision.decision_block(_pack_figures([_cost("solo", 2e-4)])))["candidates"]
    assert (entry["decided"], entry["judged"], entry["decided_share"], entry["claims"]) == (0, 0, None, [])
    assert entry["bottom_line"] == "solo: no claim judged; 0.2 USD per 1,000 useful decisions at your load"
    assert block["recommendation"]["reason"] == "the only candidate, and none of its claims is refuted at your load"
