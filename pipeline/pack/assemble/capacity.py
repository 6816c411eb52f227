"""The pack's `capacity` section: per candidate, the capacity at the SLA under the buyer's load.

A capacity claim ("4,200 tokens/s") is about the most an endpoint serves, which the production
replay cannot show: throughput at an offered load never exceeds that load. The load sweep (a
capacity search, or a level list) measures it instead: the highest load level still meeting the
SLA, the requests/s and output tokens/s served there with their intervals, and the bracket around
the knee (last level met, first missed) with whether it closed to the stated precision and, if
not, why. The rows are pipeline/analysis/capacity.py's; `loadproof verify` re-computes them.
"""

from __future__ import annotations

from pydantic import MISSING

from pipeline.analysis.capacity import capacity_rows
from pipeline.pack.document.parts import Count, FigureLineage, Number, Part
from pipeline.spec import Spec


class CapacityRow(Part):
    """One candidate's capacity at the SLA (levels in the sweep's unit: × logged traffic,
    requests/s or requests in flight; `knob` the replay setting the levels turn)."""

    candidate: str
    knob: str
    max_sla_level: Number | None  # None: not even the production level met the SLA
    max_sla_level_label: str | None
    first_missed_level: Number | None  # None: no level missed (the capacity is a lower bound)
    first_missed_level_label: str | None
    bracket_closed: bool
    reason: str
    requests_per_s: Number | None
    requests_per_s_ci_low: Number | None
    requests_per_s_ci_high: Number | None
    output_tokens_per_s: Number | None
    ci_low: Number | None  # of output_tokens_per_s
    ci_high: Number | None
    n: Count | None  # requests in the steady window at the highest SLA-meeting level
    levels_run: Count  # levels measured, the production level included
    lineage: FigureLineage | None | MISSING = MISSING


def capacity_section(
    spec: Spec, summary_rows: list[dict], replay_summary: dict | None, lineage: dict | None
) -> list[dict] | None:
    """evidence_pack.json's `capacity`: None when no sweep ran."""
    if spec.workload.replay.sweep is None:
        return None
    searches = (replay_summary or {}).get("search")
    return [{**row, "lineage": lineage} for row in capacity_rows(spec, summary_rows, searches)]
