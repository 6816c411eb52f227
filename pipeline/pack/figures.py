"""Every measured figure beside the published one, with its interval, n, verdict and lineage."""

from __future__ import annotations

from pipeline import figures as catalogue
from pipeline.spec import Spec
from pipeline.stats import verdict, wilson_interval

THROUGHPUT_FIGURES = ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput_requests_per_s")
COST_FIGURES = ("cost_per_decision_usd", "cost_per_million_output_tokens_usd")


def figure(spec: Spec, candidate: str, metric: str, measured, ci_low, ci_high, n: int, lineage: dict) -> dict:
    unit, larger_is_better = catalogue.describe(metric)
    claimed = spec.claim.figures.get(metric)
    return {
        "candidate": candidate,
        "metric": metric,
        "unit": unit,
        "claimed": claimed,
        "measured": measured,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "n": n,
        "verdict": verdict(claimed, ci_low, ci_high, larger_is_better),
        "lineage": lineage,
    }


def latency_figures(spec: Spec, rows: list[dict], lineage: dict) -> list[dict]:
    return [
        figure(
            spec,
            row["candidate"],
            catalogue.latency_figure_name(row["metric"], row["percentile"]),
            row["value"],
            row["ci_low"],
            row["ci_high"],
            row["n"],
            lineage,
        )
        for row in rows
    ]


def throughput_figures(spec: Spec, rows: list[dict], lineage: dict) -> list[dict]:
    out = []
    for row in rows:
        for metric in THROUGHPUT_FIGURES:
            out.append(
                figure(
                    spec,
                    row["candidate"],
                    metric,
                    row[metric],
                    row[f"{metric}_ci_low"],
                    row[f"{metric}_ci_high"],
                    row["requests_in_window"],
                    lineage,
                )
            )
        low, high = wilson_interval(row["requests_failed"], row["requests_planned"])
        out.append(
            figure(spec, row["candidate"], "error_rate", row["error_rate"], low, high, row["requests_planned"], lineage)
        )
    return out


def cost_figures(spec: Spec, rows: list[dict], lineage: dict) -> list[dict]:
    """Cost has no sampling interval here: a claimed cost figure stays inconclusive."""
    return [
        figure(spec, row["candidate"], metric, row[metric], None, None, row["useful_decisions"], lineage)
        for row in rows
        for metric in COST_FIGURES
    ]


def lineage(sql_files: list[dict], inputs: list[dict]) -> dict:
    """sql: the query that computed the figure; staged: the queries it read; inputs: files."""
    return {
        "sql": sql_files[-1]["path"],
        "sql_sha256": sql_files[-1]["sha256"],
        "staged_sql": sql_files[:-1],
        "inputs": inputs,
    }
