"""Suite for the evidence pack's figures: every claimed figure accounted for, for every candidate —
judged at some basis (one of the verdict words), or, where no run of the spec judges it, an
*inconclusive* figure naming the setting that would.

The lineage hashes stay a Python rule (pipeline.quality.rules.lineage_hashes_match): they are facts
about files on disk (each path's sha256), not about values in a table.
"""

from __future__ import annotations

import pandas as pd

from pipeline.analysis.statistics.stats import VERDICTS

# what to do, per cause (an expectation's own hint: the kind's generic one names the log's column mapping)
NO_FIGURE_HINT = (
    "a claimed figure has no figure at any basis: its name is one the analysis did not make; check the spec's "
    "claim against the metric catalogue, else run the partition again and report it with data/figures.parquet"
)
NO_VALUE_HINT = (
    "a claimed figure has neither a value nor a reason: the analysis states why a figure has no value; run the "
    "partition again and report it with data/figures.parquet"
)
NO_VERDICT_HINT = (
    "no run of the spec judges this claim at its basis (a capacity claim is judged at the capacity at the SLA, "
    "`workload.replay.sweep`, or at the vendor's conditions, `claim.conditions` with `workload.replay.arms`; "
    "accuracy on a labelled slice, `accuracy`); a pack written since every claim is accounted for names the "
    "setting in the figure's `setting_to_judge`: add it, or drop the claim"
)
UNKNOWN_VERDICT_HINT = "a verdict is not one of the words loadproof writes: the pack was edited or is from elsewhere"


def claims_frame(pack: dict, candidates: list[str]) -> pd.DataFrame:
    """One row per claimed figure and candidate, over the pack's figures of it at every basis:
    whether there is one, whether one has a value or a reason, and the verdict (the first figure's
    that has one; null when no figure judges the claim)."""
    rows = []
    for metric, claimed in pack["claim"]["figures"].items():
        for candidate in candidates:
            mine = [f for f in pack["figures"] if (f["candidate"], f["metric"]) == (candidate, metric)]
            judged = [f for f in mine if f.get("verdict") is not None]
            shown = (judged or mine or [{}])[0]
            rows.append(
                {
                    "candidate": candidate,
                    "metric": metric,
                    "claimed": claimed,
                    "has_figure": bool(mine),
                    "measured": shown.get("measured"),
                    "has_measured": any(f.get("measured") is not None for f in mine),
                    "has_reason": any(bool(f.get("reason")) for f in mine),
                    "verdict": shown.get("verdict"),
                }
            )
    columns = ["candidate", "metric", "claimed", "has_figure", "measured", "has_measured", "has_reason", "verdict"]
    return pd.DataFrame(rows, columns=columns).astype({"measured": "float64", "verdict": "object"})


def claims_suite(gx, params: dict) -> list:
    """Every claimed figure has, for every candidate, a figure in the pack with a measured value or
    a stated reason, and a verdict at some basis; each expectation carries the hint for its cause."""
    e = gx.expectations
    return [
        e.ExpectTableRowCountToEqual(value=params["claims"] * params["candidates"]),
        e.ExpectColumnValuesToBeInSet(column="has_figure", value_set=[True], meta={"hint": NO_FIGURE_HINT}),
        e.ExpectColumnValuesToNotBeNull(
            column="measured",
            row_condition="has_reason == False",
            condition_parser="pandas",
            meta={"hint": NO_VALUE_HINT},
        ),
        e.ExpectColumnValuesToNotBeNull(
            column="verdict",
            row_condition="has_figure == True",
            condition_parser="pandas",
            meta={"hint": NO_VERDICT_HINT},
        ),
        e.ExpectColumnValuesToBeInSet(column="verdict", value_set=list(VERDICTS), meta={"hint": UNKNOWN_VERDICT_HINT}),
    ]
