"""Rendering the pack: every string escaped, plots inline, a JSON Schema that the pack meets."""

import json
import re

import jsonschema
import pytest

from pipeline import REPO_ROOT
from pipeline.cli_output import print_headline
from pipeline.pack.render import svg
from pipeline.pack.render.pages import delta, interval, interval_level, num, render_html, render_markdown
from tests.support import chromium

HOSTILE = "<script>alert('x')</script>|pipe"
SHA = "0" * 64


def pack(**overrides) -> dict:
    figure = {
        "candidate": HOSTILE,
        "metric": "ttft_ms_p95",
        "unit": "ms",
        "claimed": 250.0,
        "measured": 300.0,
        "ci_low": 280.0,
        "ci_high": 320.0,
        "n": 400,
        "verdict": "not reproduced",
        "lineage": {
            "sql": "sql/latency_percentiles.sql",
            "sql_sha256": SHA,
            "staged_sql": [],
            "inputs": [{"path": "data/raw_timings.parquet", "sha256": SHA, "rows": 400}],
        },
    }
    base = {
        "run_id": "run-1",
        "spec_sha256": SHA,
        "spec_name": HOSTILE,
        "generated_at": "2026-11-29T00:00:00+00:00",
        "claim": {"source": HOSTILE, "figures": {"ttft_ms_p95": 250.0}},
        "figures": [figure],
        "conditions": [{"axis": HOSTILE, "claimed": HOSTILE, "production": 1.0}],
        "profile": {"requests": 10},
        "replay": {"mode": "trace", "planned": 1, "sent": 1, "errors": 0, "unsent": 0, "wall_s": 1.0},
        "client_validity": {"schedule_lag_ms_p99": 0.5, "client_limited": False, "threshold_ms": 10.0},
        "proxy_verdict": {"verdict": "must be re-measured", "reasons": [HOSTILE]},
        "claim_divergence": [],
        "data_quality": [{"asset": "raw_timings", "check": HOSTILE, "passed": False, "severity": "blocking"}],
        "inputs": [{"path": "data/raw_timings.parquet", "sha256": SHA, "rows": 400}],
        "versions": {"loadproof": "0.1.0"},
        "lineage": {"run_id": "run-1", "asset_keys": ["raw_timings"], "code_version": "abc"},
        "manifest": [],
    }
    base.update(overrides)
    return base


def test_html_escapes_every_spec_and_log_string():
    html = render_html(pack(), {"ttft_cdf": svg.cdf({HOSTILE: [1.0, 2.0]}, HOSTILE)}, confidence=0.95)
    assert "<script" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    assert html.count("<svg") == 1


def comparison_keys() -> dict:
    """The two-candidate sections (issue 6): side by side, ranking, accuracy with confusion."""
    return {
        "side_by_side": {
            "candidates": [HOSTILE],
            "rows": [
                {
                    "metric": "accuracy",
                    "unit": "fraction",
                    "claimed": 0.9,
                    "cells": [{"measured": 0.8, "ci_low": 0.7, "ci_high": 0.9, "verdict": "inconclusive"}],
                }
            ],
        },
        "ranking": [
            {
                "rank": 1,
                "candidate": HOSTILE,
                "cost_per_decision_usd": 0.001,
                "cost_per_1000_decisions_usd": 1.0,
                "cost_per_decision_usd_ci_low": 0.0009,
                "cost_per_decision_usd_ci_high": 0.0011,
                "pricing": "hourly",
                "useful_decisions": 90,
                "sla_attainment": 0.95,
                "accuracy": 0.8,
            }
        ],
        "accuracy": {
            "candidates": [HOSTILE],
            "summary": [
                {
                    "candidate": HOSTILE,
                    "scored": 100,
                    "correct": 80,
                    "errors": 0,
                    "accuracy": 0.8,
                    "accuracy_ci_low": 0.71,
                    "accuracy_ci_high": 0.87,
                    "claimed_accuracy": 0.9,
                    "accuracy_delta": -0.1,
                    "accuracy_delta_ci_low": -0.19,
                    "accuracy_delta_ci_high": -0.03,
                }
            ],
            "per_label": [
                {"label": HOSTILE, "label_items": 10, "cells": [{"accuracy": 0.5, "confused_with": f"{HOSTILE} (5)"}]}
            ],
        },
    }


def test_comparison_and_accuracy_sections_are_escaped_and_meet_the_schema():
    good = pack(**comparison_keys())
    html = render_html(good, {}, confidence=0.95)
    assert 'id="ranking-table"' in html and 'id="accuracy-table"' in html and 'id="confusion-table"' in html
    assert "<script" not in html and html.count("&lt;script&gt;") >= 5
    markdown = render_markdown(good, confidence=0.95)
    assert "Ranking by cost per useful decision" in markdown and "<script" not in markdown
    schema = json.loads((REPO_ROOT / "schemas" / "evidence_pack.schema.json").read_text())
    jsonschema.validate(good, schema)
    renamed = pack(**comparison_keys())
    renamed["ranking"][0]["usd_per_decision"] = renamed["ranking"][0].pop("cost_per_decision_usd")
    with pytest.raises(jsonschema.ValidationError, match="'cost_per_decision_usd' is a required property"):
        jsonschema.validate(renamed, schema)


def test_markdown_cells_cannot_break_the_table():
    markdown = render_markdown(pack(), confidence=0.95)
    row = next(line for line in markdown.splitlines() if "ttft_ms_p95" in line)
    assert "\\|pipe" in row and row.count(" | ") == 9  # 10 cells (verdict, then tolerance), no extra separator
    assert "<script" not in markdown


def test_number_and_delta_formatting():
    assert num(None) == "—" and num(4200.0) == "4,200" and num(32.44) == "32.4" and num(0.01234) == "0.0123"
    assert delta({"claimed": 250.0, "measured": 300.0}) == "+50.0 (+20%)"
    assert delta({"claimed": 4200.0, "measured": 259.0}) == "−3,941 (-94%)"
    assert delta({"claimed": None, "measured": 1.0}) == "—"
    assert num(9.8e-05) == "0.000098" and num(True) == "yes" and num(0.0) == "0"  # never an exponent or a repr
    # an open side is never infinite (issue 42): the bounded end alone, with the page's note
    assert interval(2200.0, None) == "≥ 2,200" and interval(None, 5.0) == "≤ 5.0" and interval(None, None) == "—"
    assert interval(2200.0, float("inf")) == "≥ 2,200"


def test_the_workload_section_renders_nested_profile_values_as_tables():
    profile = {
        "requests": 238,
        "histograms": [{"kind": "prompt_tokens", "bin_low": 8, "bin_high": 16, "requests": 17, "share": 0.07}],
        "arrival_rate": [{"bin_start_s": float(s), "requests": 4, "rate_per_s": 0.4} for s in range(30)],
        "queries": ["prompt_profile"],
        "log": {"requests": 1875, "span_s": 1199.1},
    }
    html = render_html(pack(profile=profile), {}, confidence=0.95)
    assert 'id="profile-histograms"' in html and "<details><summary>30 rows</summary>" in html
    assert '<td class="num">1,875</td>' in html and "sql/prompt_profile.sql" in html
    assert not chromium.PYTHON_REPR.search(re.sub(r"<[^>]+>", " ", html))
    assert "| `requests` | 238 | 1,875 |" in render_markdown(pack(profile=profile), confidence=0.95)


def test_schema_accepts_a_well_formed_pack_and_rejects_a_renamed_key():
    schema = json.loads((REPO_ROOT / "schemas" / "evidence_pack.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    good = pack()
    jsonschema.validate(good, schema)
    bad = pack()
    bad["figures"][0]["measured_value"] = bad["figures"][0].pop("measured")
    with pytest.raises(jsonschema.ValidationError, match="'measured' is a required property"):
        jsonschema.validate(bad, schema)
    escaping = pack()
    escaping["figures"][0]["lineage"]["inputs"][0]["path"] = "../../etc/passwd"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(escaping, schema)


def every_interval_table() -> dict:
    """The sections that hold an interval column beyond the headline and the figure tables:
    side by side, ranking, accuracy, errors by type, the load sweep's summary and levels."""
    sla = {"ttft_ms": 500.0, "tpot_ms": None, "e2e_ms": 6000.0, "min_attainment": 0.95, "max_error_rate": 0.05}
    level = {
        "candidate": "a",
        "load_level": 2.0,
        "load_level_label": "2×",
        "production": False,
        "requests_in_window": 100,
        "requests_per_s": 4.0,
        "output_tokens_per_s": 300.0,
        "goodput_requests_per_s": 3.9,
        "sla_attainment": 0.97,
        "sla_attainment_ci_low": 0.93,
        "sla_attainment_ci_high": 0.99,
        "error_rate": 0.01,
        "ttft_ms_p50": 20.0,
        "ttft_ms_p99": 60.0,
        "e2e_ms_p99": 2500.0,
        "cost_per_decision_usd": 0.0004,
        "meets_sla": True,
        "clearly_misses_sla": False,
    }
    summary = {
        "candidate": "a",
        "max_sla_load_level_label": "2×",
        "headroom_factor": 2.0,
        "goodput_requests_per_s_at_max_sla_load": 3.9,
        "ttft_ms_p99_at_max_sla_load": 60.0,
        "cost_per_decision_at_max_sla_load_usd": 0.0004,
        "cost_per_decision_at_max_sla_load_usd_ci_low": 0.0003,
        "cost_per_decision_at_max_sla_load_usd_ci_high": 0.0005,
        "first_missing_load_level_label": None,
    }
    error = {
        "candidate": "a",
        "outcome": "http_5xx",
        "requests": 3,
        "requests_planned": 200,
        "rate": 0.015,
        "rate_ci_low": 0.005,
        "rate_ci_high": 0.04,
    }
    sweep = {
        "unit": "× logged traffic",
        "production_load_level_label": "1×",
        "sla": sla,
        "levels": [level],
        "summary": [summary],
        "replay": None,
    }
    capacity = {
        "candidate": "a",
        "knob": "time_scale",
        "max_sla_level": 2.0,
        "max_sla_level_label": "2×",
        "first_missed_level": 2.38,
        "first_missed_level_label": "2.38×",
        "bracket_closed": True,
        "reason": "bracketed: met at 2×, first missed at 2.38× (ratio 1.19 ≤ 1.2)",
        "requests_per_s": 4.0,
        "requests_per_s_ci_low": 3.6,
        "requests_per_s_ci_high": 4.4,
        "output_tokens_per_s": 300.0,
        "ci_low": 270.0,
        "ci_high": 330.0,
        "n": 100,
        "levels_run": 5,
        "production_level": 1.0,
        "capacity_fraction": 2.0,
        "capacity_fraction_ci_low": 2.0,
        "capacity_fraction_ci_high": 2.38,
        "replicas_at_sla": 1,
        "replicas_at_sla_ci_low": 1,
        "replicas_at_sla_ci_high": 1,
        "peak_to_mean_ratio": 2.5,
        "replicas_at_sla_peak": 2,
        "replicas_at_sla_peak_ci_low": 2,
        "replicas_at_sla_peak_ci_high": 2,
        "pricing": "hourly",
        "cost_per_decision_at_sla_replicas_usd": 0.0005,
        "cost_per_decision_at_sla_replicas_usd_ci_low": 0.0004,
        "cost_per_decision_at_sla_replicas_usd_ci_high": 0.0006,
    }
    return {**comparison_keys(), "errors_by_type": [error], "sweep": sweep, "capacity": [capacity]}


def interval_headers(html: str, markdown: str) -> tuple[list[str], list[str]]:
    """Every table header cell that names an interval, in the HTML and in the Markdown."""
    html_cells = [cell for cell in re.findall(r"<th>([^<]*)</th>", html) if "CI" in cell]
    lines = markdown.splitlines()
    header_rows = [line for line, below in zip(lines, lines[1:]) if line.startswith("|") and below.startswith("|---")]
    markdown_cells = [cell.strip() for row in header_rows for cell in row.split("|") if "CI" in cell]
    return html_cells, markdown_cells


@pytest.mark.parametrize(("confidence", "level"), [(0.9, "90 %"), (0.95, "95 %"), (0.975, "97.5 %")])
def test_every_interval_header_names_the_spec_level(confidence, level):
    full = pack(**every_interval_table())
    html, markdown = render_html(full, {}, confidence=confidence), render_markdown(full, confidence=confidence)
    html_cells, markdown_cells = interval_headers(html, markdown)
    # HTML: headline, ranking, accuracy and its delta, latency, rates, errors, sweep summary, capacity (2),
    # its sizing (1), sweep levels; Markdown: headline, ranking, accuracy and its delta, errors, sweep
    # summary, capacity (2), its sizing (1), every measured figure
    assert len(html_cells) == 12 and len(markdown_cells) == 10
    assert all(level in cell for cell in html_cells + markdown_cells if cell != "delta CI")
    assert f"the whole {level} interval" in html and f"every interval is {level}" in markdown
    for other in {"90 %", "95 %", "97.5 %"} - {level}:
        assert other not in html and other not in markdown


def test_the_cli_headline_names_the_spec_level(capsys):
    print_headline(pack(), 0.9)
    printed = capsys.readouterr().out
    assert "90 % CI" in printed and "95 %" not in printed
    assert interval_level(0.9) == "90 %" and interval_level(0.95) == "95 %" and interval_level(0.999) == "99.9 %"


BROKEN_PAGES = {
    "console": "<script>console.error('boom'); undefinedFunction();</script>",
    "too wide": "<div style='width:300px'><table><tr><td style='white-space:nowrap'>"
    + "x" * 200
    + "</td></tr></table></div>",
    "squeezed": "<table style='width:300px'><tr><td style='word-break:break-all'>prompt_tokens_p50</td>"
    "<td style='white-space:nowrap'>{}</td></tr></table>".format("y" * 60),
    "python repr": "<table><tr><td>{'requests': 1875, 'span_s': 1199.1}</td><td>None</td></tr></table>",
    "image": "<img src='missing.png' alt='plot'>",
}


@pytest.mark.skipif(chromium.skip_reason() is not None, reason=str(chromium.skip_reason()))
@pytest.mark.parametrize("kind", sorted(BROKEN_PAGES))
def test_each_browser_check_can_fail(kind, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(f"<!DOCTYPE html><html><body><section id='s'>{BROKEN_PAGES[kind]}</section></body></html>")
    seen = chromium.audit(page)
    assert seen.sections == ["s"]
    assert any(problem.startswith(f"{kind}: ") for problem in seen.problems()), seen.problems()


@pytest.mark.parametrize(
    ("text", "is_repr"),
    [
        ("{'requests': 1875}", True),
        ('["a", "b"]', True),
        ("client limited: False", True),
        ("None", True),
        ("462.20000000000005", True),
        ("Figure(metric='x')", True),
        ("<object at 0x7f00>", True),
        ("none", False),  # the sweep's "first load missing the SLA: none"
        ("0.000106", False),
        ("0.0000987 – 0.000119", False),  # three significant digits after four zeros: num's own
        ("2,200 – ∞", False),
        ("[0, 255] tokens", False),
        ("card_payment_wrong_exchange_rate (3)", False),
    ],
)
def test_what_counts_as_a_python_repr(text, is_repr):
    assert bool(chromium.PYTHON_REPR.search(text)) is is_repr


def test_a_failed_check_shows_its_explanation_lines_on_the_page():
    """A failed suite's explanation (what failed, how many rows, example ids, what to do) is in
    the pack's data_quality row; the page shows each line under FAILED, escaped."""
    line = "t_first_token_ns ≥ t_sent_ns: 3 of 20 rows fail (e.g. request_id=r7). What to do: check the clock"
    failed = {"asset": "raw_timings", "check": "raw_timings_expectations", "passed": False, "severity": "warn"}
    html = render_html(pack(data_quality=[{**failed, "explanation": [line, HOSTILE]}]), {}, confidence=0.95)
    section = html[html.index('id="data-quality-table"') :]
    assert "3 of 20 rows fail (e.g. request_id=r7). What to do: check the clock" in section
    assert HOSTILE not in section  # escaped like every other string
    passing = render_html(pack(data_quality=[{**failed, "passed": True, "explanation": [line]}]), {}, confidence=0.95)
    assert "3 of 20 rows fail" not in passing  # only a failed check explains itself


def test_the_markdown_reads_as_written_without_html_escapes_or_runs_of_empty_lines():
    lagged = {**pack()["figures"][0], "candidate": "fastserve-8b", "timed_from": "from the plan (24 ms > 10 ms) & on"}
    markdown = render_markdown(
        pack(figures=[lagged], spec_name="a > b", claim={"source": "x", "figures": {}}), confidence=0.95
    )
    assert "(24 ms > 10 ms) & on" in markdown and "# Evidence pack — a > b" in markdown
    assert "&gt;" not in markdown and "&amp;" not in markdown
    assert "\n\n\n" not in markdown and not markdown.startswith("\n")
    assert not re.search(r"\n[ \t]+\n", markdown)
    hostile = render_markdown(pack(), confidence=0.95)  # what could open a tag or an entity still cannot
    assert "<script" not in hostile and "&lt;script>" in hostile
    assert "&amp;lt;" in render_markdown(pack(spec_name="&lt;b>"), confidence=0.95)


def test_a_claimed_latency_figure_shows_its_instrument_error_beside_it():
    """The pack reads the figure's own columns (`instrument_error_ms`, `instrument_error_source`)."""
    measured = {**pack()["figures"][0], "instrument_error_ms": 3.5, "instrument_error_source": "loop receipt lag"}
    for page in (
        render_markdown(pack(figures=[measured]), confidence=0.95),
        render_html(pack(figures=[measured]), {}, confidence=0.95),
    ):
        assert "instrument error 3.5 ms (loop receipt lag)" in page and "C·t/4" in page
    assert "instrument error" not in render_markdown(pack(), confidence=0.95)  # a figure without it: no note
