"""The decision block (`decision`, issue 42 item 5): per candidate a bottom line, its judged claims
with how far each lies from its claim and the decided share, then the recommendation across
candidates. The words are DESIGN.md's ("Words for a decision").

Everything is read from the pack's own figures: the verdicts, the intervals, `times_claimed` and
`percent_from_claim` (made in `pipeline/analysis/judge/how_far.py`), the capacity at the SLA and the cost
per useful decision at the production load; the decided share is counted there too
(`how_far.decided_share`). So `loadproof verify`, which re-computes the figures, derives the block
again and names any difference.

The recommendation is for the buyer's load: among the candidates none of whose claims is refuted
(not reproduced) at the production load or at the capacity at the SLA, the lowest cost per useful
decision at the production load; a claim refuted only at the vendor's own conditions says the
vendor's benchmark does not reproduce, not that the candidate fails this load. With no such
candidate, or none priced, the recommendation is "no candidate" and says why.
"""

from __future__ import annotations

from pipeline.analysis.declare import metrics
from pipeline.analysis.judge.how_far import decided_share
from pipeline.analysis.statistics.stats import HOLDS, HOLDS_WITHIN_TOLERANCE, INCONCLUSIVE, NOT_REPRODUCED
from pipeline.pack.assemble.claim_words import against_claim, fit, number
from pipeline.pack.assemble.summary import candidates_in

COST = "cost_per_decision_usd"  # the cost per useful decision at the production load
AT_YOUR_LOAD = (metrics.PRODUCTION_LOAD, metrics.CAPACITY_AT_SLA)  # where a refuted claim rules a candidate out
PLACE = {
    metrics.VENDOR_CONDITIONS: "at the vendor's conditions",
    metrics.CAPACITY_AT_SLA: "at your SLA",
    metrics.PRODUCTION_LOAD: "at your load",
}


def times_words(times: float | None) -> str:
    """`26.7×`, `1.6×`, `0.345×` (three significant digits, never an exponent); `—` for none."""
    if times is None:
        return "—"
    return f"{number(times)}×" if abs(times) >= 100 else f"{times:.3g}×"


def percent_words(percent: float | None) -> str:
    """`+2,566 %`, `−4.2 %`; `—` for none."""
    if percent is None:
        return "—"
    sign = "+" if percent >= 0 else "−"
    size = abs(percent)
    return f"{sign}{size:,.0f} %" if size >= 10 else f"{sign}{size:.1f} %"


def share_words(share: float | None) -> str:
    """A decided share as a percentage: `62 %`; `—` for none."""
    return "—" if share is None else f"{share * 100:.0f} %"


def usd_per_thousand(figure: dict | None) -> str:
    """The cost per useful decision per 1,000 decisions (a single one costs fractions of a cent)."""
    if figure is None or figure.get("measured") is None:
        return "not measured"
    return f"{figure['measured'] * 1000:.3g} USD per 1,000 useful decisions"


def _basis(figure: dict) -> str:
    return figure.get("basis") or metrics.PRODUCTION_LOAD


def judged_claims(figures: list[dict], candidate: str) -> list[dict]:
    """One candidate's judged claims (a claim with a verdict), in the pack's order."""
    return [f for f in figures if f["candidate"] == candidate and f.get("claimed") is not None and f.get("verdict")]


def claim_row(figure: dict) -> dict:
    """A judged claim as the decision table shows it: every number is the figure's own."""
    return {
        "metric": figure["metric"],
        "display": metrics.metric(figure["metric"]).display,
        "basis": _basis(figure),
        "unit": figure["unit"],
        "claimed": figure["claimed"],
        "measured": figure.get("measured"),
        "interval": [figure.get("ci_low"), figure.get("ci_high")],
        "verdict": figure["verdict"],
        "times_claimed": figure.get("times_claimed"),
        "percent_from_claim": figure.get("percent_from_claim"),
    }


def _badness(figure: dict) -> float:
    """How far on the claim's bad side (an order only: the worst refuted claim is named first)."""
    times = figure.get("times_claimed")
    if times is None or times <= 0:
        return 0.0
    return 1 / times if metrics.metric(figure["metric"]).larger_is_better else times


def _named(figure: dict) -> str:
    """`TTFT p95 6,665 vs 250 ms claimed at the vendor's conditions, 26.7×`."""
    times = figure.get("times_claimed")
    return f"{against_claim(figure)} {PLACE[_basis(figure)]}" + (f", {times_words(times)}" if times else "")


def bottom_line(candidate: str, claims: list[dict], figures: list[dict]) -> str:
    """One sentence of at most 240 characters: how many claims hold, the worst not reproduced with
    how far, the inconclusive ones, what the capacity at the SLA carries and the cost per useful
    decision at the production load; the least important parts go first when it is too long."""
    if not claims:
        head = f"{candidate}: no claim judged"
    else:
        held = [c for c in claims if c["verdict"] in (HOLDS, HOLDS_WITHIN_TOLERANCE)]
        within = sum(c["verdict"] == HOLDS_WITHIN_TOLERANCE for c in claims)
        head = f"{candidate}: {len(held)} of {len(claims)} claims hold" + (
            f" ({within} within tolerance)" if within else ""
        )
    failed = sorted((c for c in claims if c["verdict"] == NOT_REPRODUCED), key=_badness, reverse=True)
    unsure = sum(c["verdict"] == INCONCLUSIVE for c in claims)
    tails = []
    if failed:
        tails.append(f"; {len(failed)} not reproduced (worst {_named(failed[0])})")
    if unsure:
        tails.append(f"; {unsure} inconclusive")
    carries = _carries(figures, candidate)
    if carries is not None:
        tails.append(f"; carries {number(carries)}× your load at your SLA")
    cost = _cost(figures, candidate)
    if cost is not None and cost.get("measured") is not None:
        tails.append(f"; {usd_per_thousand(cost)} at your load")
    return fit(head, *tails)


def _carries(figures: list[dict], candidate: str) -> float | None:
    """How many times your load the candidate carries at your SLA (the sweep's capacity_fraction)."""
    return next(
        (
            f["measured"]
            for f in figures
            if f["candidate"] == candidate and f["metric"] == "capacity_fraction" and f.get("measured") is not None
        ),
        None,
    )


def rules_out(figure: dict, figures: list[dict]) -> bool:
    """Whether a claim not reproduced rules its candidate out: one at the production load does; one
    at your SLA (the vendor's throughput not reached there) only where the candidate does not carry
    your load at your SLA either — where it does, the shortfall is priced in its measured cost per
    useful decision, and your load is served. One at the vendor's conditions never does."""
    if figure["verdict"] != NOT_REPRODUCED or _basis(figure) not in AT_YOUR_LOAD:
        return False
    if _basis(figure) != metrics.CAPACITY_AT_SLA:
        return True
    carries = _carries(figures, figure["candidate"])
    return carries is None or carries < 1


def _cost(figures: list[dict], candidate: str) -> dict | None:
    return next(
        (
            f
            for f in figures
            if f["candidate"] == candidate and f["metric"] == COST and _basis(f) == metrics.PRODUCTION_LOAD
        ),
        None,
    )


def recommendation(figures: list[dict], candidates: list[str]) -> dict:
    """The candidate to pick for this load, its cost per useful decision and the one reason."""
    refuted = {c: [f for f in judged_claims(figures, c) if rules_out(f, figures)] for c in candidates}
    eligible = [c for c in candidates if not refuted[c]]
    costs = {c: (_cost(figures, c) or {}).get("measured") for c in candidates}
    prices: dict[str, float] = {c: cost for c in eligible if (cost := costs[c]) is not None}
    priced = sorted(prices, key=prices.__getitem__)
    out_of_it = "; ".join(
        f"{c}: {_named(sorted(refuted[c], key=_badness, reverse=True)[0])}" for c in candidates if refuted[c]
    )
    if not candidates:
        reason = "no candidate: no figure was measured"
    elif not eligible:
        who = "the only candidate has" if len(candidates) == 1 else "every candidate has"
        reason = f"no candidate: {who} a claim not reproduced at your load ({out_of_it})"
    elif not priced:
        reason = f"no candidate: no cost per useful decision was measured for {', '.join(eligible)}"
    elif len(candidates) == 1:
        reason = "the only candidate, and none of its claims is refuted at your load"
    elif len(eligible) == 1:
        reason = f"the only candidate none of whose claims is refuted at your load ({out_of_it})"
    else:
        runner_up = f"; next {priced[1]} at {usd_per_thousand(_cost(figures, priced[1]))}" if len(priced) > 1 else ""
        reason = (
            f"the lowest cost per useful decision among the {len(eligible)} candidates none of whose claims is "
            f"refuted at your load{runner_up}"
        )
    pick = priced[0] if priced and eligible else None
    if pick is None:
        return {"candidate": None, "cost_per_decision_usd": None, "reason": reason, "line": fit(reason)}
    short = [
        f
        for f in judged_claims(figures, pick)
        if f["verdict"] == NOT_REPRODUCED and _basis(f) == metrics.CAPACITY_AT_SLA
    ]
    aside = ""  # a claim not reproduced at your SLA while your load is carried there: said, not hidden
    if short:
        shown = metrics.metric(short[0]["metric"]).display
        aside = (
            f"; its {shown} falls short at your SLA, yet it carries {number(_carries(figures, pick))}× your load there"
        )
    cost = costs[pick]
    line = fit(f"Recommendation: {pick}, {usd_per_thousand(_cost(figures, pick))} at your load: {reason}", aside)
    reason += aside
    return {"candidate": pick, "cost_per_decision_usd": cost, "reason": reason, "line": line}


def decision_block(figures: list[dict]) -> dict:
    """The pack's `decision`: each candidate's bottom line, claims and decided share, then the
    recommendation across them."""
    candidates = candidates_in(figures)
    rows = []
    for candidate in candidates:
        claims = judged_claims(figures, candidate)
        decided, judged, share = decided_share([f["verdict"] for f in claims])
        rows.append(
            {
                "candidate": candidate,
                "bottom_line": bottom_line(candidate, claims, figures),
                "claims": [claim_row(f) for f in claims],
                "decided": decided,
                "judged": judged,
                "decided_share": share,
            }
        )
    return {"candidates": rows, "recommendation": recommendation(figures, candidates)}
