"""The pack's bill-check section (pipeline/pack/assemble/bill_check.py): read from the throughput
table's bill-check columns and the figures, never computed; rendered in HTML and Markdown with the
counter it used, and valid against the pack's JSON Schema."""

import json

import jsonschema

from pipeline import REPO_ROOT
from pipeline.pack.assemble.bill_check import bill_check_section
from pipeline.pack.audit.bill_verify import recheck_bill_section
from pipeline.pack.render.pages import render_html, render_markdown

SHA = "0" * 64


def throughput_row(candidate: str, verdict: str, exact: bool = True, requests: int | None = 40) -> dict:
    return {
        "candidate": candidate,
        "requests_in_window": 40,
        "bill_requests": requests,
        "bill_counter": "loadproof-approx",
        "bill_counter_exact": exact,
        "bill_tolerance": 0.01,
        "bill_verdict": verdict,
        "prompt_tokens_billed": 4400,
        "prompt_tokens_counted": 4000,
        "output_tokens_billed": 800,
        "output_tokens_counted": 800,
        "bill_cost_billed_usd": 0.00136,
        "bill_cost_counted_usd": 0.00128,
    }


def figure(candidate: str, metric: str, measured: float, basis: str = "production_load") -> dict:
    return {
        "candidate": candidate,
        "metric": metric,
        "basis": basis,
        "unit": "ratio",
        "measured": measured,
        "ci_low": measured - 0.01,
        "ci_high": measured + 0.01,
        "n": 40,
        "verdict": None,
    }


def pack(**parts) -> dict:
    """A minimal pack document with `parts`."""
    return {
        "run_id": "run-1",
        "spec_sha256": SHA,
        "spec_name": "bill",
        "generated_at": "2026-11-29T00:00:00+00:00",
        "claim": {"source": "datasheet", "figures": {}},
        "figures": [],
        "conditions": [],
        "profile": {"requests": 10},
        "replay": {"mode": "trace", "planned": 1, "sent": 1, "errors": 0, "unsent": 0, "wall_s": 1.0},
        "proxy_verdict": {"verdict": "good-enough proxy", "reasons": []},
        "claim_divergence": [],
        "inputs": [],
        "versions": {"loadproof": "0.1.0"},
        "client_validity": {"schedule_lag_ms_p99": 0.5, "client_limited": False, "threshold_ms": 10.0},
        "data_quality": [],
        "lineage": {"run_id": "run-1", "asset_keys": ["raw_timings"], "code_version": "abc"},
        "manifest": [],
        **parts,
    }


def section() -> list[dict]:
    rows = [throughput_row("honest", "within tolerance"), throughput_row("overbilling", "over-billed")]
    rows.append(throughput_row("silent", None, requests=None))  # no usage reported: no row
    figures = [
        figure("overbilling", "billed_to_counted_prompt_tokens", 1.1),
        figure("overbilling", "billed_to_counted_cost", 1.0625),
        figure("overbilling", "cost_per_decision_usd", 0.002),
        figure("overbilling", "billed_to_counted_prompt_tokens", 9.9, basis="vendor_conditions"),  # not this basis
        figure("honest", "billed_to_counted_prompt_tokens", 1.0),
        figure("honest", "ttft_ms_p50", 30.0),  # not a bill figure
    ]
    return bill_check_section(rows, figures)


def test_the_section_reads_the_columns_and_the_production_load_figures():
    rows = section()
    assert [r["candidate"] for r in rows] == ["honest", "overbilling"]
    honest, overbilling = rows
    assert overbilling["verdict"] == "over-billed" and overbilling["counter"] == "loadproof-approx"
    assert overbilling["prompt_tokens_billed"] == 4400 and overbilling["cost_counted_usd"] == 0.00128
    assert overbilling["figures"]["billed_to_counted_prompt_tokens"]["measured"] == 1.1
    assert set(overbilling["figures"]) == {
        "billed_to_counted_prompt_tokens",
        "billed_to_counted_cost",
        "cost_per_decision_usd",
    }
    assert set(honest["figures"]) == {"billed_to_counted_prompt_tokens"}


def test_the_section_renders_with_its_counter_and_meets_the_schema():
    document = pack(bill_check=section())
    html = render_html(document, {}, confidence=0.95)
    assert 'id="bill-check-table"' in html and "over-billed" in html and "loadproof-approx" in html
    markdown = render_markdown(document, confidence=0.95)
    assert "## Billed vs counted tokens" in markdown and "beyond 1 %" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| overbilling"))
    assert "1.1" in row and "over-billed" in row
    schema = json.loads((REPO_ROOT / "schemas" / "evidence_pack.schema.json").read_text())
    jsonschema.validate(document, schema)
    approximate = pack(bill_check=[dict(section()[0], counter_exact=False, verdict="not a bill verdict")])
    assert "(approximate)" in render_markdown(approximate, confidence=0.95)
    assert "bill-check-table" not in render_html(pack(bill_check=[]), {}, confidence=0.95)


def test_verify_names_an_edited_verdict_and_passes_the_section_as_written():
    rows = [throughput_row("honest", "within tolerance"), throughput_row("overbilling", "over-billed")]
    figures = [figure("overbilling", "billed_to_counted_prompt_tokens", 1.1)]
    document = {"bill_check": bill_check_section(rows, figures)}
    assert recheck_bill_section(document, rows, figures) == []
    document["bill_check"][1]["verdict"] = "within tolerance"
    document["bill_check"][1]["prompt_tokens_billed"] = 4000
    assert recheck_bill_section(document, rows, figures) == [
        "bill_check: overbilling: prompt_tokens_billed in the pack 4000, re-computed 4400",
        "bill_check: overbilling: verdict in the pack 'within tolerance', re-computed 'over-billed'",
    ]
    document["bill_check"].pop(0)
    assert recheck_bill_section(document, rows, figures)[0] == "bill_check: honest: missing from the pack"
    assert recheck_bill_section({}, rows, figures) == []  # written before the bill check
