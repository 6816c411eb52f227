"""Where a figure lives in the Dagster UI: the deep link each lineage row of the pack carries
(issue 29: the auditor's path from a number on the page to its raw timings in three clicks).

A figure is a row the `figures` asset wrote for one candidate × model-version partition; its link
opens that asset at that partition (where the UI shows every figure of the partition with its
verdict and the sha256 of the raw timings it was read from) and, beside it, the run that wrote it.
The URL shapes are the Dagster UI's own (its asset page links a partition as
`?view=partitions&partition=<key>`): `/assets/<key path joined by />?view=partitions&partition=<p>`
and `/runs/<run_id>`. The base is a setting (`loadproof run --ui-url`, `PackStorage.ui_url`),
the local `dagster dev` address by default. Plain Python: the pack only renders what is built here
from rows analysis already made.

The side-by-side pack's figures were computed from the combined files (every partition's rows in
one file), not the partition's: beside the partition link, each of its lineage rows also links the
`candidate_comparison` asset (`combined_url`), whose materialisation names each combined file with
its sha256 (and, in `merged_from`, the partition files and runs it came from)."""

from __future__ import annotations

from urllib.parse import quote

from pipeline.pack.document.parts import DagsterLink, Figure

DEFAULT_UI_URL = "http://127.0.0.1:3000"  # `make dev`'s `dagster dev` address
FIGURES_ASSET = "figures"  # the asset that writes data/figures.parquet
COMPARISON_ASSET = "candidate_comparison"  # the asset that writes the side-by-side pack from the combined files


def partition_key(candidate: str, model_version: str) -> str:
    """The UI's key of a candidate × version partition (Dagster joins a multi-partition's
    dimensions in name order with `|`: candidate, then model_version)."""
    return f"{candidate}|{model_version}"


def asset_url(base_url: str, asset: str, partition: str | None = None) -> str:
    path = "/".join(quote(part, safe="") for part in asset.split("/"))
    url = f"{base_url.rstrip('/')}/assets/{path}"
    return f"{url}?view=partitions&partition={quote(partition, safe='')}" if partition else url


def run_url(base_url: str, run_id: str) -> str:
    return f"{base_url.rstrip('/')}/runs/{quote(run_id, safe='')}"


def figure_link(base_url: str, candidate: str, model_version: str, run_id: str | None) -> DagsterLink:
    partition = partition_key(candidate, model_version)
    link = DagsterLink(asset=FIGURES_ASSET, partition=partition, url=asset_url(base_url, FIGURES_ASSET, partition))
    if run_id:
        link.run_id, link.run_url = run_id, run_url(base_url, run_id)
    return link


def link_figures(
    figures: list[Figure], runs: dict[str, tuple[str, str | None]], base_url: str, combined: bool = False
) -> None:
    """Give each figure's lineage its link: `runs` maps a candidate to the (model version, run id)
    its rows come from (a candidate pack: its own partition and run; the side-by-side pack: each
    partition's). A candidate the pack names no partition for keeps no link. `combined`: the
    side-by-side pack, whose links also name the comparison asset (`combined_url`)."""
    for figure in figures:
        if figure.candidate in runs:
            version, run_id = runs[figure.candidate]
            link = figure_link(base_url, figure.candidate, version, run_id)
            if combined:
                link.combined_url = asset_url(base_url, COMPARISON_ASSET)
            figure.lineage.dagster = link
