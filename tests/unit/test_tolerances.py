"""Tolerance verdicts and every claim accounted for (issue 31, items 4 and 7): `claim.tolerance` per
figure kind with defaults and sources from the metric catalogue, the verdict and its tolerance made
in one place (`pipeline.analysis.judge.figures.judged`), carried to every consumer (a repeated replay's
runs, the vendor-conditions section, the side-by-side cells, the pages), and a claimed figure no
run of the spec judges given an inconclusive figure naming the setting that would. Hand-built rows,
no I/O."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import ValidationError

from pipeline import REPO_ROOT
from pipeline.analysis.declare import catalogue, metrics
from pipeline.analysis.judge import figures as made
from pipeline.analysis.judge.repeated_figures import combined
from pipeline.analysis.judge.unjudged_claims import unjudged_claims
from pipeline.analysis.statistics.stats import HOLDS, HOLDS_WITHIN_TOLERANCE, INCONCLUSIVE, NOT_REPRODUCED
from pipeline.pack.assemble.arms import vendor_conditions_section
from pipeline.pack.assemble.comparison import side_by_side
from pipeline.pack.render.pages import render_html, render_markdown, tolerance_label
from pipeline.quality.expectations import pack as claims_expectations
from pipeline.spec import Spec
from tests.support.arm_plans import judged_at_vendor_conditions
from tests.support.pack_documents import document, figure_row
from tests.support.specs import demo_spec_dict

LINEAGE = {"sql": "sql/arm_window.sql", "inputs": [{"path": "data/arm_timings.parquet", "sha256": "0" * 64}]}


def spec(figures: dict, tolerance: dict | None = None, **sections) -> Spec:
    data = demo_spec_dict()
    data["claim"]["figures"] = figures
    if tolerance is not None:
        data["claim"]["tolerance"] = tolerance
    data.update(sections)
    return Spec.model_validate(data)


def test_every_figure_kind_has_a_default_tolerance_with_its_source():
    kinds = {entry.kind for entry in catalogue.CATALOGUE}
    assert kinds <= set(catalogue.TOLERANCES)
    throughput, accuracy = metrics.tolerance_default("output_tokens_per_s"), metrics.tolerance_default("accuracy")
    assert (throughput.key, throughput.fraction) == ("throughput", 0.10)
    assert "anyscale/llm-continuous-batching-benchmarks#4" in throughput.source
    assert (accuracy.key, accuracy.fraction) == ("accuracy", 0.01) and "MLPerf" in accuracy.source
    assert metrics.tolerance_setting("ttft_ms_p99") == "claim.tolerance.latency"


def test_the_spec_sets_a_tolerance_per_kind_and_says_whose_it_is():
    tolerance = spec({"ttft_ms_p95": 250}, {"latency": 0.2}).claim.tolerance
    assert tolerance is not None
    assert tolerance.of("ttft_ms_p95") == (0.2, "claim.tolerance.latency, set in the spec")
    fraction, source = tolerance.of("output_tokens_per_s")
    assert fraction == 0.10 and source.startswith("claim.tolerance.throughput, default: independent reproductions")
    with pytest.raises(ValidationError, match="tolerance"):
        spec({"ttft_ms_p95": 250}, {"latency": 1.5})
    with pytest.raises(ValidationError, match="speed"):
        spec({"ttft_ms_p95": 250}, {"speed": 0.1})


def test_a_figure_carries_its_verdict_with_the_tolerance_and_source_it_was_judged_with():
    # 3,990 tokens/s with a tight interval against 4,200: within the default 10 % (down to 3,780)
    item = made.figure(
        spec({"output_tokens_per_s": 4200}), "c", "output_tokens_per_s", 3990, 3900, 4080, 100, "q", "vendor_conditions"
    )
    assert item["verdict"] == HOLDS_WITHIN_TOLERANCE and item["tolerance"] == 0.10
    assert item["tolerance_source"].startswith("claim.tolerance.throughput, default")
    strict = spec({"output_tokens_per_s": 4200}, {"throughput": 0.0})
    item = made.figure(strict, "c", "output_tokens_per_s", 3990, 3900, 4080, 100, "q", "vendor_conditions")
    assert (
        item["verdict"] == NOT_REPRODUCED and item["tolerance_source"] == "claim.tolerance.throughput, set in the spec"
    )
    unclaimed = made.figure(strict, "c", "requests_per_s", 10, 9, 11, 100, "q", "vendor_conditions")
    assert unclaimed["verdict"] is None and "tolerance" not in unclaimed
    served = made.figure(strict, "c", "output_tokens_per_s", 300, 290, 310, 100, "q")  # the production load
    assert served["verdict"] is None and "tolerance" not in served and served["not_judged"]


def test_a_pack_written_before_tolerances_is_judged_without_one():
    before = spec({"output_tokens_per_s": 4200}).model_copy()
    before = before.model_copy(update={"claim": before.claim.model_copy(update={"tolerance": None})})
    item = made.figure(before, "c", "output_tokens_per_s", 3990, 3900, 4080, 100, "q", "vendor_conditions")
    assert item["verdict"] == NOT_REPRODUCED and "tolerance" not in item
    assert unjudged_claims(before, []) == []


def test_a_repeated_replay_judges_its_runs_with_the_figures_tolerance():
    figure = {"candidate": "c", "metric": "ttft_ms_p95", "claimed": 250.0, "tolerance": 0.1}
    runs = [
        {"repeat": r, "measured": m, "ci_low": lo, "ci_high": hi, "n": 100, "verdict": None}
        for r, m, lo, hi in ((0, 240.0, 230.0, 270.0), (1, 250.0, 240.0, 260.0))
    ]
    assert combined(figure, runs, 0.95)["verdict"] == HOLDS_WITHIN_TOLERANCE  # 230 – 270 ≤ 275
    assert combined({**figure, "tolerance": 0.0}, runs, 0.95)["verdict"] == INCONCLUSIVE


def test_the_vendor_conditions_section_states_the_analysis_verdict_and_tolerance():
    the_spec = spec({"ttft_ms_p95": 250})
    row = {"arm": "a_vendor_conditions", "candidate": "c", "metric": "ttft_ms_p95", "measured": 260.0}
    rows = [row | {"ci_low": 255.0, "ci_high": 270.0, "n": 90}]
    (out,) = vendor_conditions_section(the_spec, rows, judged_at_vendor_conditions(the_spec, rows), LINEAGE)
    assert out.verdict == HOLDS_WITHIN_TOLERANCE and out.tolerance == 0.10
    assert out.tolerance_source == the_spec.claim.tolerance.of("ttft_ms_p95")[1]


def test_a_capacity_claim_no_run_judges_is_inconclusive_and_names_the_sweep():
    the_spec = spec({"output_tokens_per_s": 4200, "ttft_ms_p95": 250})
    at_load = [
        made.figure(the_spec, "fastserve-8b", "output_tokens_per_s", 300, 290, 310, 100, "throughput"),
        made.figure(the_spec, "fastserve-8b", "ttft_ms_p95", 200, 190, 210, 100, "latency_percentiles"),
    ]
    (capacity,) = unjudged_claims(the_spec, at_load)  # the partition's candidate only
    assert (capacity["metric"], capacity["basis"]) == ("output_tokens_per_s", metrics.CAPACITY_AT_SLA)
    assert capacity["verdict"] == INCONCLUSIVE and capacity["measured"] is None
    assert capacity["setting_to_judge"] == "workload.replay.sweep" and "workload.replay.sweep" in capacity["reason"]
    assert capacity["tolerance"] == 0.10  # beside the verdict, even here
    # a capacity search judged it (at any verdict): nothing to add
    judged = made.figure(the_spec, "fastserve-8b", "output_tokens_per_s", 1000, 900, 1100, 50, "q", "capacity_at_sla")
    assert unjudged_claims(the_spec, [*at_load, judged]) == []


def test_other_claims_no_run_judges_name_what_would():
    the_spec = spec({"total_tokens_per_s": 9000, "goodput_requests_per_s": 5, "accuracy": 0.9})
    served = made.figure(the_spec, "c", "goodput_requests_per_s", 4, 3, 5, 100, "throughput")
    by_metric = {f["metric"]: f for f in unjudged_claims(the_spec, [served])}
    assert {f["candidate"] for f in by_metric.values()} == {"c"}
    assert by_metric["total_tokens_per_s"]["basis"] == metrics.VENDOR_CONDITIONS
    assert by_metric["total_tokens_per_s"]["setting_to_judge"] == "workload.replay.arms"
    assert by_metric["accuracy"]["setting_to_judge"] == "accuracy"
    goodput = by_metric["goodput_requests_per_s"]
    assert "setting_to_judge" not in goodput and "served demand" in goodput["reason"]
    assert {f["verdict"] for f in by_metric.values()} == {INCONCLUSIVE}


def test_the_claims_check_passes_once_every_claim_is_accounted_for():
    the_spec = spec({"output_tokens_per_s": 4200})
    served = made.figure(the_spec, "c", "output_tokens_per_s", 300, 290, 310, 100, "throughput")
    pack = {"claim": {"figures": {"output_tokens_per_s": 4200}}, "figures": [served]}
    frame = claims_expectations.claims_frame(pack, ["c"])
    assert frame["verdict"].isna().all()  # served demand alone: not accounted for
    pack["figures"] += unjudged_claims(the_spec, [served])
    frame = claims_expectations.claims_frame(pack, ["c"])
    assert list(frame["verdict"]) == [INCONCLUSIVE] and bool(frame["has_reason"].iloc[0])


def test_the_side_by_side_cell_keeps_the_tolerance_beside_its_verdict():
    (row,) = side_by_side([figure_row()])["rows"]
    assert row["cells"][0]["verdict"] == HOLDS_WITHIN_TOLERANCE and row["cells"][0]["tolerance"] == 0.1
    assert tolerance_label(figure_row()) == "10 % (claim.tolerance.latency, default)"
    assert tolerance_label(figure_row(tolerance=None)) == "—"


def test_the_pages_state_the_tolerance_beside_each_verdict_and_its_source_once_in_the_glossary():
    unjudged = figure_row(
        metric="output_tokens_per_s",
        unit="tokens/s",
        basis="capacity_at_sla",
        claimed=4200.0,
        measured=None,
        ci_low=None,
        ci_high=None,
        n=0,
        verdict=INCONCLUSIVE,
        reason="no capacity search ran",
        setting_to_judge="workload.replay.sweep",
    )
    pack = document([figure_row(), unjudged])
    markdown = render_markdown(pack, confidence=0.95)
    row = next(line for line in markdown.splitlines() if "`ttft_ms_p95`" in line and "holds within" in line)
    assert row.endswith("| **holds within tolerance** | 10 % |")
    # the source once, in the glossary's entry for the tolerance (issue 42, item 5)
    assert (
        "- **10 %** (claim.tolerance.latency, default): Little's law. Used for `ttft_ms_p95`, `output_tokens_per_s`."
        in markdown
    )
    assert markdown.count("claim.tolerance.latency") == 1
    assert "set `workload.replay.sweep` to judge it" in markdown
    html = render_html(pack, {}, confidence=0.95)
    assert 'class="verdict verdict-holds-within-tolerance"' in html
    # in the HTML tables, the percentage beside the verdict, linked to its source in the glossary
    assert '<a class="note" href="#tolerances">tolerance 10 %</a>' in html
    assert html.count("claim.tolerance.latency") == 1 and html.index('id="tolerances"') > html.index('id="definitions"')
    assert "<code>workload.replay.sweep</code> to judge it" in html
    assert HOLDS in html  # the words' note names every verdict
    schema = json.loads((REPO_ROOT / "schemas" / "evidence_pack.schema.json").read_text())
    jsonschema.validate(pack, schema)  # the new keys are the document's
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document([figure_row(verdict="holds, roughly")]), schema)
