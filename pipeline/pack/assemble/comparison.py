"""The pack's comparison sections: candidates side by side, the ranking by cost per useful
decision, accuracy per label, latency per prompt-length bucket, errors by type."""

from __future__ import annotations

from pipeline.analysis.declare.metrics import BASES
from pipeline.analysis.judge.figures import figure_key

SIDE_BY_SIDE = (
    "ttft_ms_p50", "ttft_ms_p95", "ttft_ms_p99", "tpot_ms_p50", "itl_ms_p99", "e2e_ms_p50", "e2e_ms_p99",
    "output_tokens_per_s", "requests_per_s", "goodput_requests_per_s", "sla_attainment", "error_rate",
    "accuracy", "cost_per_decision_usd", "cost_per_million_output_tokens_usd",
    "cost_per_decision_at_max_sla_load_usd",
)  # fmt: skip
BUCKET_METRICS = ("ttft_ms", "e2e_ms", "ttft_from_schedule_ms", "e2e_from_schedule_ms")
BUCKET_PERCENTILES = ("p50", "p95", "p99")


def candidates_of(figures: list[dict]) -> list[str]:
    return list(dict.fromkeys(f["candidate"] for f in figures))


def side_by_side(figures: list[dict]) -> dict:
    """One row per figure, one cell per candidate: measured, interval, verdict when claimed."""
    names = candidates_of(figures)
    by_key = {figure_key(f): f for f in figures}
    rows = []
    for basis in BASES:  # the production load's figures first, then capacity, then the vendor's conditions
        for metric in SIDE_BY_SIDE:
            cells = [by_key.get((name, metric, basis)) for name in names]
            if not any(cell is not None and cell["measured"] is not None for cell in cells):
                continue
            unit = next(cell["unit"] for cell in cells if cell is not None)
            claimed = next((cell["claimed"] for cell in cells if cell is not None), None)
            row = {"metric": metric, "unit": unit, "claimed": claimed, "cells": [_cell(cell) for cell in cells]}
            rows.append(row | {"basis": basis})
    return {"candidates": names, "rows": rows}


def _cell(figure: dict | None) -> dict:
    if figure is None:
        return {"measured": None, "ci_low": None, "ci_high": None, "verdict": None}
    cell = {key: figure[key] for key in ("measured", "ci_low", "ci_high", "verdict")}
    if figure.get("tolerance") is not None:  # beside the verdict: the tolerance it used
        cell["tolerance"] = figure["tolerance"]
    return cell


def ranking(cost_rows: list[dict], throughput_rows: list[dict], accuracy_rows: list[dict]) -> list[dict]:
    """Candidates from the lowest cost per useful decision up; a candidate with none comes last."""
    throughput = {row["candidate"]: row for row in throughput_rows}
    accuracy = {row["candidate"]: row for row in accuracy_rows}
    ordered = sorted(
        cost_rows,
        key=lambda row: (row["cost_per_decision_usd"] is None, row["cost_per_decision_usd"] or 0.0, row["candidate"]),
    )
    return [
        {
            "rank": position,
            "candidate": row["candidate"],
            "cost_per_decision_usd": row["cost_per_decision_usd"],
            "cost_per_1000_decisions_usd": None
            if row["cost_per_decision_usd"] is None
            else row["cost_per_decision_usd"] * 1000,
            "cost_per_decision_usd_ci_low": row.get("cost_per_decision_usd_ci_low"),
            "cost_per_decision_usd_ci_high": row.get("cost_per_decision_usd_ci_high"),
            "pricing": row["pricing"],
            "useful_decisions": row["useful_decisions"],
            "sla_attainment": throughput.get(row["candidate"], {}).get("sla_attainment"),
            "accuracy": accuracy.get(row["candidate"], {}).get("accuracy"),
        }
        for position, row in enumerate(ordered, start=1)
    ]


def accuracy_section(summary_rows: list[dict], label_rows: list[dict]) -> dict | None:
    """Per candidate: accuracy, interval, delta; per label: accuracy of each candidate and the
    most frequent wrong answer."""
    if not summary_rows:
        return None
    names = [row["candidate"] for row in summary_rows]
    labels: dict[str, dict] = {}
    for row in label_rows:
        entry = labels.setdefault(row["label"], {"label": row["label"], "label_items": row["label_items"], "cells": {}})
        cell = entry["cells"].setdefault(row["candidate"], {"accuracy": row["label_accuracy"], "confused_with": None})
        if not row["correct"] and cell["confused_with"] is None:  # rows come most frequent first
            cell["confused_with"] = f"{row['predicted']} ({row['items']})"
    per_label = [
        {
            "label": entry["label"],
            "label_items": entry["label_items"],
            "cells": [entry["cells"].get(name) or {"accuracy": None, "confused_with": None} for name in names],
        }
        for entry in sorted(labels.values(), key=lambda e: e["label"])
    ]
    return {"candidates": names, "summary": summary_rows, "per_label": per_label}


def latency_by_bucket(latency_rows: list[dict]) -> list[dict]:
    """TTFT and E2E p50/p95/p99 per candidate and prompt-length bucket ('all' first)."""
    cells: dict[tuple, dict] = {}
    for row in latency_rows:
        if row["metric"] not in BUCKET_METRICS or row["percentile"] not in BUCKET_PERCENTILES:
            continue
        key = (row["candidate"], row.get("scope") or "all")
        entry = cells.setdefault(key, {"candidate": key[0], "scope": key[1], "n": {}, "values": {}})
        entry["n"][row["metric"]] = row["n"]
        entry["values"][f"{row['metric']}_{row['percentile']}"] = row["value"]
    return list(cells.values())


# the reply-mix section's figures, in its column order (pipeline/analysis/declare/catalogue.py)
REPLY_MIX_FIGURES = (
    "ttft_ms_p50",
    "ttfo_ms_p50",
    "ttft_ms_p95",
    "ttfo_ms_p95",
    "reasoning_tokens_per_request",
    "reasoning_share",
    "tool_call_schema_accuracy",
    "structured_output_valid_rate",
)


def reply_mix(figures: list[dict]) -> list[dict]:
    """Per candidate, the reply-mix figures at the production load (read from the figures, never
    computed here); no rows when no candidate reasoned, called a tool or answered a schema."""
    rows: dict[str, dict] = {}
    for f in figures:
        if f["metric"] in REPLY_MIX_FIGURES and f.get("basis", "production_load") == "production_load":
            entry = rows.setdefault(f["candidate"], {"candidate": f["candidate"], "figures": {}})
            entry["figures"][f["metric"]] = {k: f.get(k) for k in ("metric", "measured", "ci_low", "ci_high", "n")}
    agentic = ("reasoning_tokens_per_request", "tool_call_schema_accuracy", "structured_output_valid_rate")
    shown = any((row["figures"].get(name) or {}).get("measured") for row in rows.values() for name in agentic)
    return list(rows.values()) if shown else []


def errors_by_type(error_rows: list[dict]) -> list[dict]:
    return [row for row in error_rows if row["outcome"] != "ok"]
