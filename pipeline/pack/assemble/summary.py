"""What a committee reads first: the measured proxy verdict and the five-line executive summary.

The proxy verdict is *measured* (issue 15, item 6) once the claim's own benchmark has run: a
candidate's published figures are a good-enough proxy when every claim reproduces (holds, or holds
within its tolerance: `claim.tolerance`) at the vendor's conditions and the buyer's capacity at the
SLA is within `proxy_tolerance.capacity_ratio` of each claimed capacity figure; otherwise they must
be re-measured, and the reasons are ordered by what matters most: the moves the attribution ladder
resolved (the axis that moved the headline most first), then the claims that did not reproduce, then
the moves whose interval includes no change. The first screen shows the first `FIRST_REASONS` of
each candidate's.
Without a vendor-conditions arm (the claim names no conditions), the rule on condition divergence
(`pipeline/workload/divergence.py`) stays the verdict; with one, it stays as "what to expect".

Both read only the pack's own figures (each with its basis) and the headline waterfall, so they
re-derive from what `loadproof verify` re-computes.
"""

from __future__ import annotations

from pipeline.analysis.declare import metrics
from pipeline.analysis.sizing.replicas import pricing_words
from pipeline.analysis.statistics.stats import REPRODUCED
from pipeline.pack.assemble.claim_words import (
    LINE_LIMIT,
    claim_line,
    fit,
    interval_words,
    number,
    verdict_summary,
    verdict_words,
    with_unit,
)
from pipeline.workload.divergence import GOOD_ENOUGH, RE_MEASURE

MEASURED, RULE = "measured", "rule on condition divergence"
SERVED_DEMAND_AXIS = "production load"  # the waterfall's last step (pipeline/pack/assemble/arms.py PRODUCTION_LOAD)


def _at(figures: list[dict], candidate: str, basis: str) -> list[dict]:
    return [f for f in figures if f["candidate"] == candidate and f.get("basis", metrics.PRODUCTION_LOAD) == basis]


def candidates_in(figures: list[dict]) -> list[str]:
    return list(dict.fromkeys(f["candidate"] for f in figures))


def moves(waterfall: list[dict], candidate: str) -> list[dict]:
    """The ladder's axes of one candidate as moves (a step's change from the one before it):
    resolved moves (the change's interval excludes no change) first, each group largest relative
    move first; a capacity figure's ladder is preferred, as the headline. The
    walk starts at the vendor's conditions measured here (claimed → measured there is the
    endpoint, not an axis of the load: the proxy verdict's facts say it), and served demand at
    the production load is where it ends, not an axis."""
    ladders = [entry for entry in waterfall if entry["candidate"] == candidate]
    ladders.sort(key=lambda entry: metrics.claim_kind(entry["metric"]) != "capacity")
    if not ladders:
        return []
    ladder = ladders[0]
    out, before = [], None
    for step in ladder["steps"]:
        if step["axis"] == SERVED_DEMAND_AXIS:
            break
        if before and step.get("measured") is not None:
            change = (step["measured"] - before) / before
            low, high = step.get("change_ci_low"), step.get("change_ci_high")
            resolved = (low is not None and low > 0) or (high is not None and high < 0)
            out.append(
                {
                    "metric": ladder["metric"],
                    "axis": step["axis"],
                    "label": step["label"],
                    "change": change,
                    "resolved": resolved,
                }
            )
        if step.get("measured") is not None:
            before = step["measured"]
    # a move whose interval holds no change is no attribution at this n: after every resolved one
    return sorted(out, key=lambda move: (not move["resolved"], -abs(move["change"])))


def _move_text(move: dict) -> str:
    text = f"{move['label']} moved {metrics.metric(move['metric']).display} by {move['change']:+.0%}"
    return text if move["resolved"] else text + " (not resolved: its interval includes no change)"


def measured_proxy_verdict(figures: list[dict], waterfall: list[dict], capacity_ratio: float) -> dict | None:
    """The proxy verdict from the measured arms, per candidate and overall; None when no
    vendor-conditions figure was measured (the rule-based verdict stands)."""
    vendor = [f for f in figures if f.get("basis") == metrics.VENDOR_CONDITIONS and f["claimed"] is not None]
    if not vendor:
        return None
    per_candidate = []
    for candidate in candidates_in(vendor):
        facts = [
            claim_line([f])
            for f in _at(figures, candidate, metrics.VENDOR_CONDITIONS)
            if f["claimed"] is not None and f["verdict"] not in REPRODUCED  # holds, or within its tolerance
        ]
        for f in _at(figures, candidate, metrics.CAPACITY_AT_SLA):
            if f["metric"] not in metrics.CAPACITY_FIGURES or f["claimed"] is None:
                continue
            floor = f["claimed"] / capacity_ratio
            if f["measured"] is None or f["measured"] < floor:
                entry = metrics.metric(f["metric"])
                facts.append(
                    f"{entry.display} at your SLA: {with_unit(f['measured'], entry.unit)}, below "
                    f"{with_unit(f['claimed'], entry.unit)} claimed ÷ {capacity_ratio:g} "
                    "(workload.proxy_tolerance.capacity_ratio)"
                )
        verdict = RE_MEASURE if facts else GOOD_ENOUGH
        ranked = moves(waterfall, candidate)
        # what moved the headline (resolved moves), then what failed, then moves no interval resolves
        reasons = (
            [_move_text(m) for m in ranked if m["resolved"]]
            + facts
            + [_move_text(m) for m in ranked if not m["resolved"]]
            if facts
            else facts
        )
        per_candidate.append({"candidate": candidate, "verdict": verdict, "reasons": reasons})
    overall = GOOD_ENOUGH if all(c["verdict"] == GOOD_ENOUGH for c in per_candidate) else RE_MEASURE
    reasons = [f"{c['candidate']}: {reason}" for c in per_candidate for reason in c["reasons"]]
    if overall == GOOD_ENOUGH:
        reasons = [
            "every claim reproduces at the vendor's conditions (within its tolerance), and the capacity at the SLA "
            "is within "
            f"{capacity_ratio:g}× of each claimed capacity, for every candidate"
        ]
    return {"verdict": overall, "reasons": reasons, "basis": MEASURED, "candidates": per_candidate}


FIRST_REASONS = 3  # the reasons per candidate behind the proxy verdict on the first screen

CLAIMS_LINE = "Claims at the vendor's own conditions and at your SLA: "
NOT_RUN = (
    "neither was run (the vendor's conditions: claim.conditions with workload.replay.arms; the capacity at "
    "the SLA: workload.replay.sweep)"
)


def _summarised(parts: list[tuple[str, list[dict]]]) -> str:
    """`title` + the verdict summary of its figures, for each part, joined by `; `, within the
    line's limit: every group not holding names its furthest claim where that fits, else only each
    part's worst group, else only the first part's, else none; a line still too long is cut (the
    tables below have every claim)."""
    line = ""
    for first, rest in ((3, 3), (1, 1), (1, 0), (0, 0)):
        line = "; ".join(
            title + verdict_summary(group, first if at == 0 else rest) for at, (title, group) in enumerate(parts)
        )
        if len(line) <= LINE_LIMIT:
            return line
    return fit(line)


def claims_line(figures: list[dict], candidate: str) -> str:
    """The first line: the claims (cost aside: the cost line's) where the vendor measured them, at
    the vendor's own conditions, and where the buyer needs them, at the capacity at the SLA, each
    place's counted by verdict with the claim furthest from its own named (`verdict_summary`); the
    per-claim numbers are the tables'. The vendor's conditions are named only where their arm ran
    (a measured figure); with neither place, what would run them."""
    vendor = [
        f
        for f in _at(figures, candidate, metrics.VENDOR_CONDITIONS)
        if metrics.claim_kind(f["metric"]) != "cost" and f["claimed"] is not None
    ]
    at_sla = [
        f
        for f in _at(figures, candidate, metrics.CAPACITY_AT_SLA)
        if metrics.claim_kind(f["metric"]) != "cost" and f["claimed"] is not None
    ]
    vendor_ran = any(f["measured"] is not None for f in vendor)
    if not vendor_ran:
        at_sla, vendor = vendor + at_sla, []
    if not vendor and not at_sla:
        return CLAIMS_LINE + NOT_RUN
    parts = [("Claims at the vendor's own conditions: ", vendor)] if vendor else []
    if at_sla:
        parts.append(("at your SLA: " if parts else "Claims at your SLA: ", at_sla))
    return _summarised(parts)


def executive_summary(figures: list[dict], waterfall: list[dict]) -> list[dict]:
    """Five lines per candidate, each at most `LINE_LIMIT` characters: the claims at the vendor's
    conditions and at the SLA, the claims at the buyer's load, the capacity at the SLA, cost per
    useful decision at production and at capacity, and the axis that moved the headline most. Each
    summarises; the per-claim detail is the tables'."""
    out = []
    for candidate in candidates_in(figures):
        at_load = _at(figures, candidate, metrics.PRODUCTION_LOAD)
        production = [f for f in at_load if metrics.claim_kind(f["metric"]) == "latency at load"]
        quality = [f for f in at_load if metrics.claim_kind(f["metric"]) == "quality" and f["claimed"] is not None]
        capacity = {f["metric"]: f for f in _at(figures, candidate, metrics.CAPACITY_AT_SLA)}
        cost = {f["metric"]: f for f in figures if f["candidate"] == candidate and f["metric"].startswith("cost_per_d")}
        at_production = cost.get("cost_per_decision_usd")
        at_capacity = cost.get("cost_per_decision_at_max_sla_load_usd")
        ranked = moves(waterfall, candidate)
        at_your_load = [("At your production load: ", production)]
        out.append(
            {
                "candidate": candidate,
                "lines": [
                    claims_line(figures, candidate),
                    _summarised(at_your_load + ([("on your labelled slice: ", quality)] if quality else [])),
                    capacity_line(capacity),
                    fit(
                        f"Cost per useful decision: {_usd(at_production, 'not measured')} at the production load, "
                        f"{_usd(at_capacity, NO_CAPACITY)} at the capacity at the SLA",
                        replicas_cost(capacity),
                    ),
                    fit(
                        "Moved the headline most: " + (_move_text(ranked[0]) if ranked else "no attribution ladder ran")
                    ),
                ],
            }
        )
    return out


def capacity_line(capacity: dict[str, dict]) -> str:
    """The capacity at the SLA, above or below the production load: the fraction of the buyer's
    load it carries (its interval the bracket), the replicas that carry all of it and its peak,
    then what is served there (each a figure at the capacity at the SLA)."""
    tokens, requests = capacity.get("output_tokens_per_s"), capacity.get("requests_per_s")
    if tokens is None or tokens["measured"] is None or requests is None:
        reason = tokens.get("reason") if tokens else "no capacity search ran (workload.replay.sweep)"
        return fit(f"Capacity at the SLA: unknown: {reason}")
    fraction, replicas = capacity.get("capacity_fraction"), capacity.get("replicas_at_sla")
    peak = capacity.get("replicas_at_sla_peak")
    carries, sized, at_peak = "", "", ""
    if fraction is not None and fraction["measured"] is not None:
        high = "open" if fraction["ci_high"] is None else number(fraction["ci_high"])
        carries = f"carries {number(fraction['measured'])}× of your load ({number(fraction['ci_low'])} – {high})"
        if replicas is not None and replicas["measured"] is not None:
            sized = f": {_replicas(replicas)}"
            at_peak = f", {_replicas(peak)} at its peak" if peak is not None and peak["measured"] is not None else ""
    tokens_served = (
        f"{number(tokens['measured'])} output tokens/s "
        f"{interval_words(tokens['ci_low'], tokens['ci_high'], tokens)} at load {tokens.get('load_level_label', '?')}"
    )
    reason = f"; {tokens['reason']}" if tokens.get("reason") else ""
    # the most detail that fits the line: the search's reason, the peak's replicas, the requests/s
    # and the replicas go first, in that order; what it carries and the verdict on the claim stay
    for keep in range(4, -1, -1):
        head = carries + (sized if keep >= 1 else "") + (at_peak if keep >= 3 else "")
        served = (f"{number(requests['measured'])} requests/s, " if keep >= 2 else "") + tokens_served
        line = f"Capacity at the SLA: {head}{'; ' if head else ''}{served}{_against_claim(tokens)}"
        line += reason if keep >= 4 else ""
        if len(line) <= LINE_LIMIT:
            return line
    return fit(line)


def _against_claim(figure: dict) -> str:
    """`; against the claimed 4,200 tokens/s: not reproduced`, or nothing (its tolerance is the
    glossary's)."""
    if figure.get("claimed") is None or not figure.get("verdict"):
        return ""
    claimed = with_unit(figure["claimed"], metrics.metric(figure["metric"]).unit)
    return f"; against the claimed {claimed}: {verdict_words(figure)}"


def _replicas(figure: dict) -> str:
    """4 replicas (3 – 4): the count, and the bracket carried through where it differs."""
    count, low, high = (int(figure[k]) if figure[k] is not None else None for k in ("measured", "ci_low", "ci_high"))
    word = "replica" if count == 1 else "replicas"
    return f"{count} {word}" + (f" ({low} – {high})" if low is not None and low != high else "")


def replicas_cost(capacity: dict[str, dict]) -> str:
    """The cost per useful decision at the replicas that carry the production load, and which
    price applied (a per-hour price scales with replicas; a per-token price does not)."""
    cost, replicas = capacity.get("cost_per_decision_at_sla_replicas_usd"), capacity.get("replicas_at_sla")
    if cost is None or cost["measured"] is None or replicas is None or replicas["measured"] is None:
        return ""
    price = pricing_words(cost.get("interval_method"))
    count = int(replicas["measured"])
    return f", {_usd(cost, 'not measured')} at {count} {'replica' if count == 1 else 'replicas'}" + (
        f" ({price})" if price else ""
    )


NO_CAPACITY = "no capacity search ran (workload.replay.sweep)"


def _usd(figure: dict | None, missing: str) -> str:
    """Per 1,000 decisions: a single decision costs fractions of a cent; where there is no number,
    why (the figure's own reason, else `missing`)."""
    if figure is None or figure["measured"] is None:
        reason = (figure or {}).get("reason") or missing
        return f"— USD per 1,000 ({reason})"
    return f"{figure['measured'] * 1000:.3g} USD per 1,000"
