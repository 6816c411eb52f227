"""Suite for the evidence pack's figures: every claimed figure measured, or a reason stated.

The lineage hashes stay a Python rule (pipeline.quality.rules.lineage_hashes_match): they are facts
about files on disk (each path's sha256), not about values in a table.
"""

from __future__ import annotations

import pandas as pd

from pipeline.analysis.stats import HOLDS, INCONCLUSIVE, NOT_REPRODUCED


def claims_frame(pack: dict, candidates: list[str]) -> pd.DataFrame:
    """One row per claimed figure and candidate, with the pack's figure for it where there is one."""
    found = {(f["candidate"], f["metric"]): f for f in pack["figures"]}
    rows = []
    for metric, claimed in pack["claim"]["figures"].items():
        for candidate in candidates:
            figure = found.get((candidate, metric), {})
            rows.append(
                {
                    "candidate": candidate,
                    "metric": metric,
                    "claimed": claimed,
                    "has_figure": bool(figure),
                    "measured": figure.get("measured"),
                    "has_measured": figure.get("measured") is not None,
                    "has_reason": bool(figure.get("reason")),
                    "verdict": figure.get("verdict"),
                }
            )
    columns = ["candidate", "metric", "claimed", "has_figure", "measured", "has_measured", "has_reason", "verdict"]
    return pd.DataFrame(rows, columns=columns).astype({"measured": "float64", "verdict": "object"})


def claims_suite(gx, params: dict) -> list:
    """Every claimed figure has, for every candidate, a figure in the pack with a measured value
    or a stated reason; a measured claimed figure has a verdict."""
    e = gx.expectations
    return [
        e.ExpectTableRowCountToEqual(value=params["claims"] * params["candidates"]),
        e.ExpectColumnValuesToBeInSet(column="has_figure", value_set=[True]),
        e.ExpectColumnValuesToNotBeNull(
            column="measured", row_condition="has_reason == False", condition_parser="pandas"
        ),
        e.ExpectColumnValuesToNotBeNull(
            column="verdict", row_condition="has_measured == True", condition_parser="pandas"
        ),
        e.ExpectColumnValuesToBeInSet(column="verdict", value_set=[HOLDS, NOT_REPRODUCED, INCONCLUSIVE]),
    ]
