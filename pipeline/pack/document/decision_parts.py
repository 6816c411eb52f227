"""The decision block of the evidence-pack document (`decision`, issue 42 item 5): what a committee
acts on, first on the first screen. Built by `pipeline/pack/assemble/decision.py` from the pack's own
figures (each claim's numbers, verdict and how far from its claim are the figures'), re-derived by
`loadproof verify`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.pack.document.parts import Basis, Count, FirstScreenLine, MetricName, Number, Part


class DecisionClaim(Part):
    """One judged claim of one candidate: the claim, the measurement with its interval, the verdict
    and how far from the claim (`times_claimed` = measured ÷ claimed, `percent_from_claim`)."""

    metric: MetricName
    display: str  # the catalogue's name for people (TTFT p95)
    basis: Basis
    unit: str
    claimed: Number
    measured: Number | None
    interval: list[Number | None] = Field(min_length=2, max_length=2)  # [ci_low, ci_high]; None: an open end
    verdict: Literal["holds", "holds within tolerance", "not reproduced", "inconclusive"]
    times_claimed: Number | None
    percent_from_claim: Number | None


class CandidateDecision(Part):
    """One candidate's bottom line (at most `FIRST_SCREEN_LINE` characters), its judged claims, and
    how many of them the run decided (holds, holds within tolerance or not reproduced)."""

    candidate: str
    bottom_line: FirstScreenLine
    claims: list[DecisionClaim]
    decided: Count
    judged: Count
    decided_share: Number | None  # decided ÷ judged; None with no claim judged


class Recommendation(Part):
    """The candidate a committee should pick for this load (None: no candidate, and `reason` says
    why), the cost per useful decision at the production load that ranks it (USD per decision, the
    figure `cost_per_decision_usd`), and the one reason that decided it; `line` says all three."""

    candidate: str | None
    cost_per_decision_usd: Number | None
    reason: str
    line: FirstScreenLine


class Decision(Part):
    candidates: list[CandidateDecision]
    recommendation: Recommendation
