"""Each figure's lineage row links into the Dagster UI (issue 29 item 3): the figures asset at the
figure's partition and the run that wrote it, under the base URL the user set; the HTML, the
Markdown and the JSON carry it, and a pack written before links still renders."""

import json
from html.parser import HTMLParser

import jsonschema
import pytest

from pipeline import REPO_ROOT
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL, asset_url, link_figures, run_url
from pipeline.pack.document.parts import Figure
from pipeline.pack.render.pages import render_html, render_markdown

SHA = "0" * 64


def figure(candidate: str) -> Figure:
    return Figure.model_validate(
        {
            "candidate": candidate,
            "metric": "ttft_ms_p95",
            "unit": "ms",
            "claimed": 45.0,
            "measured": 40.0,
            "ci_low": 35.6,
            "ci_high": 44.0,
            "n": 186,
            "verdict": "holds",
            "lineage": {
                "sql": "sql/latency_percentiles.sql",
                "sql_sha256": SHA,
                "staged_sql": [],
                "inputs": [{"path": "data/raw_timings.parquet", "sha256": SHA, "rows": 238}],
            },
        }
    )


def document(figures: list[Figure]) -> dict:
    return {
        "run_id": "run-top",
        "spec_sha256": SHA,
        "spec_name": "demo",
        "generated_at": "2026-12-02T00:00:00+00:00",
        "claim": {"source": "vendor", "figures": {"ttft_ms_p95": 45.0}},
        "figures": [f.model_dump(mode="json", exclude_unset=False) for f in figures],
        "conditions": [],
        "profile": {"requests": 10},
        "replay": {"mode": "trace", "planned": 1, "sent": 1, "errors": 0, "unsent": 0, "wall_s": 1.0},
        "client_validity": {"schedule_lag_ms_p99": 0.5, "client_limited": False, "threshold_ms": 10.0},
        "proxy_verdict": {"verdict": "good-enough proxy", "reasons": []},
        "claim_divergence": [],
        "data_quality": [],
        "inputs": [{"path": "data/raw_timings.parquet", "sha256": SHA, "rows": 238}],
        "versions": {"loadproof": "0.1.0"},
        "lineage": {"run_id": "run-top", "asset_keys": ["figures"], "code_version": "abc"},
        "manifest": [],
    }


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs)["href"])


def test_the_url_shapes_are_the_dagster_uis():
    assert asset_url("http://127.0.0.1:3000/", "figures", "fastserve-8b|2026-11-01") == (
        "http://127.0.0.1:3000/assets/figures?view=partitions&partition=fastserve-8b%7C2026-11-01"
    )
    assert asset_url("https://ui.example/dagster", "a/b c") == "https://ui.example/dagster/assets/a/b%20c"
    assert run_url("http://h:1", "abc-123") == "http://h:1/runs/abc-123"
    assert DEFAULT_UI_URL == "http://127.0.0.1:3000"


@pytest.mark.parametrize("base", [DEFAULT_UI_URL, "https://dagster.example.org/loadproof"])
def test_each_lineage_row_links_to_its_partition_and_run_in_every_format(base):
    figures = [figure("fastserve-8b"), figure("budget-8b"), figure("not-run")]
    link_figures(figures, {"fastserve-8b": ("2026-11-01", "run-a"), "budget-8b": ("2026-11-01", "run-b")}, base)
    pack = document(figures)
    assert "dagster" not in pack["figures"][2]["lineage"]  # no partition named for it: no link
    jsonschema.validate(pack, json.loads((REPO_ROOT / "schemas" / "evidence_pack.schema.json").read_text()))
    first = pack["figures"][0]["lineage"]["dagster"]
    assert first == {
        "asset": "figures",
        "partition": "fastserve-8b|2026-11-01",
        "url": f"{base}/assets/figures?view=partitions&partition=fastserve-8b%7C2026-11-01",
        "run_id": "run-a",
        "run_url": f"{base}/runs/run-a",
    }
    parser = Links()
    parser.feed(render_html(pack, {}, confidence=0.95))
    expected = [
        first["url"],
        first["run_url"],
        f"{base}/assets/figures?view=partitions&partition=budget-8b%7C2026-11-01",
        f"{base}/runs/run-b",
    ]
    assert [href for href in parser.hrefs if href.startswith(base)] == expected
    markdown = render_markdown(pack, confidence=0.95)
    assert f"({first['url']})" in markdown and f"[run-b]({base}/runs/run-b)" in markdown


def test_the_side_by_side_packs_rows_also_link_the_combined_inputs():
    """The side-by-side pack's figures come from the combined raw timings, not a partition's: each
    of its lineage rows also links `candidate_comparison`, whose metadata names each combined file
    with its sha256 (a candidate pack's rows do not)."""
    figures = [figure("fastserve-8b"), figure("budget-8b")]
    link_figures(
        figures, {"fastserve-8b": ("v1", "run-a"), "budget-8b": ("v1", "run-b")}, DEFAULT_UI_URL, combined=True
    )
    pack = document(figures)
    jsonschema.validate(pack, json.loads((REPO_ROOT / "schemas" / "evidence_pack.schema.json").read_text()))
    combined = f"{DEFAULT_UI_URL}/assets/candidate_comparison"
    assert [f["lineage"]["dagster"]["combined_url"] for f in pack["figures"]] == [combined, combined]
    assert pack["figures"][0]["lineage"]["dagster"]["url"].startswith(f"{DEFAULT_UI_URL}/assets/figures?")
    parser = Links()
    parser.feed(render_html(pack, {}, confidence=0.95))
    assert parser.hrefs.count(combined) == 2  # one per lineage row
    assert f"[candidate_comparison]({combined})" in render_markdown(pack, confidence=0.95)


def test_a_pack_without_links_still_renders():
    pack = document([figure("fastserve-8b")])
    pack["figures"][0]["lineage"].pop("dagster", None)
    assert "in Dagster" not in render_html(pack, {}, confidence=0.95)
    assert "Dagster UI" not in render_markdown(pack, confidence=0.95)


def test_the_base_is_a_setting_of_the_pack_storage():
    """`loadproof run|demo --ui-url` reaches the assets that write the pack through PackStorage."""
    from pipeline.definitions import build_definitions

    assert build_definitions().resources["storage"].ui_url == DEFAULT_UI_URL
    assert build_definitions(ui_url="https://ui.example").resources["storage"].ui_url == "https://ui.example"
