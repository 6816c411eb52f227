"""The pack's bill-check section: **billed vs counted tokens** per candidate, read from the
throughput table's bill-check columns (sql/bill_check.sql, `pipeline/analysis/tabulate/bill_check.py`) and
the figures — nothing is computed here. Cost per useful decision (from billed tokens, the figure
`cost_per_decision_usd`) stands beside the token-cost ratio, so a reader sees what the bill's
difference does to the cost."""

from __future__ import annotations

from pipeline.analysis.declare.catalogue_bill import BILL_CHECK

BILL_FIGURES = (*(m.name for m in BILL_CHECK), "cost_per_decision_usd")

# section key → throughput column
COLUMNS = {
    "counter": "bill_counter",
    "counter_exact": "bill_counter_exact",
    "tolerance": "bill_tolerance",
    "verdict": "bill_verdict",
    "requests": "bill_requests",
    "prompt_tokens_billed": "prompt_tokens_billed",
    "prompt_tokens_counted": "prompt_tokens_counted",
    "output_tokens_billed": "output_tokens_billed",
    "output_tokens_counted": "output_tokens_counted",
    "cost_billed_usd": "bill_cost_billed_usd",
    "cost_counted_usd": "bill_cost_counted_usd",
}


def bill_check_section(throughput_rows: list[dict], figures: list[dict]) -> list[dict]:
    """One row per candidate that had a request to compare; [] when none did (no usage reported,
    or a pack written before the bill check)."""
    by_candidate: dict[str, dict] = {}
    for f in figures:
        if f["metric"] in BILL_FIGURES and f.get("basis", "production_load") == "production_load":
            by_candidate.setdefault(f["candidate"], {})[f["metric"]] = {
                k: f.get(k) for k in ("metric", "measured", "ci_low", "ci_high", "n")
            }
    return [
        {
            "candidate": row["candidate"],
            **{key: row.get(column) for key, column in COLUMNS.items()},
            "figures": by_candidate.get(row["candidate"], {}),
        }
        for row in throughput_rows
        if row.get("bill_requests")
    ]
