"""How far each judged figure lies from its claim, and how many claims a run decided (issue 42, item 5).

A committee reads "1.6× the claim" faster than an interval: `times_claimed` is measured ÷ claimed
and `percent_from_claim` is (measured − claimed) ÷ claimed × 100, made here once for every judged
figure (one with a verdict, a claim and a measured value; a claim of 0 has no ratio) and written
as columns of `data/figures.parquet`; the pack's decision block only reads them.

A claim is *decided* when its verdict is holds, holds within tolerance or not reproduced; the
*decided share* is decided ÷ judged claims (DESIGN.md, "Words for a decision").
"""

from __future__ import annotations

from pipeline.analysis.statistics.stats import HOLDS, HOLDS_WITHIN_TOLERANCE, NOT_REPRODUCED

DECIDED = (HOLDS, HOLDS_WITHIN_TOLERANCE, NOT_REPRODUCED)
HOW_FAR_COLUMNS = ("times_claimed", "percent_from_claim")


def how_far(measured: float | None, claimed: float | None) -> tuple[float | None, float | None]:
    """(measured ÷ claimed, (measured − claimed) ÷ claimed × 100); (None, None) where either is
    missing or the claim is 0 (no ratio to it)."""
    if measured is None or claimed is None or claimed == 0:
        return None, None
    return measured / claimed, (measured - claimed) / claimed * 100.0


def with_how_far(figures: list[dict]) -> list[dict]:
    """Each figure with `times_claimed` and `percent_from_claim`: set on a judged figure (a
    verdict), None on any other (a figure without a claim, served demand, a claim no run judged)."""
    out = []
    for figure in figures:
        times, percent = (
            how_far(figure.get("measured"), figure.get("claimed")) if figure.get("verdict") else (None,) * 2
        )
        out.append({**figure, "times_claimed": times, "percent_from_claim": percent})
    return out


def decided_share(verdicts: list[str | None]) -> tuple[int, int, float | None]:
    """(decided, judged, decided ÷ judged) over the verdicts of judged claims (a None is not
    judged and counts in neither); the share is None with nothing judged."""
    judged = [verdict for verdict in verdicts if verdict]
    decided = sum(verdict in DECIDED for verdict in judged)
    return decided, len(judged), (decided / len(judged) if judged else None)
