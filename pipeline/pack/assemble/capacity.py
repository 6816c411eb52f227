"""The pack's `capacity` section: per candidate, the capacity at the SLA under the buyer's load.

A capacity claim ("4,200 tokens/s") is about the most an endpoint serves, which the production
replay cannot show: throughput at an offered load never exceeds that load. The load sweep (a
capacity search, or a level list) measures it instead: the highest load level still meeting the
SLA, the requests/s and output tokens/s served there with their intervals, and the bracket around
the knee (last level met, first missed) with whether it closed to the stated precision and, if
not, why. The rows are `data/capacity.parquet`'s (pipeline/analysis/sizing/capacity.py); `loadproof verify` re-computes
them.
"""

from __future__ import annotations

from pipeline.spec import Spec


def capacity_section(spec: Spec, rows: list[dict], lineage: dict | None) -> list[dict] | None:
    """evidence_pack.json's `capacity`: the rows of `data/capacity.parquet` (analysis made them)
    with their lineage; None when no sweep ran."""
    if spec.workload.replay.sweep is None:
        return None
    return [{**{k: v for k, v in row.items() if k != "run_id"}, "lineage": lineage} for row in rows]
