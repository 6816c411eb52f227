"""A claimed figure in words, with its numbers, for the lines a committee reads first
(`summary.py`'s executive summary): the figure's display name from the metric catalogue, the claim
with its unit, each measurement with its interval and where it was made, the verdict and the
tolerance it was judged with. For example:

    Output tokens/s: 4,200 tokens/s claimed, 990 (0 – 2,673) at the vendor's own conditions,
    1,589 (1,064 – 2,113) at your SLA: not reproduced (tolerance 10 %, claim.tolerance.throughput, default)

Plain data in (the pack's figures, each with its basis), a string out: it reads what analysis made
and makes no number of its own.
"""

from __future__ import annotations

import math

from pipeline.analysis import metrics
from pipeline.analysis.stats import INCONCLUSIVE

WHERE = {
    metrics.VENDOR_CONDITIONS: "at the vendor's own conditions",
    metrics.CAPACITY_AT_SLA: "at your SLA",
    metrics.PRODUCTION_LOAD: "at your production load",
}
ON_THE_SLICE = "on your labelled slice"  # accuracy is measured on the buyer's slice, not at a load


def number(value: float | None) -> str:
    """A figure for people: whole numbers with thousands separators from 1,000 up, four significant
    digits below, never an exponent (15,960, not 1.596e+04; 0.00001234, not 1.234e-05); — for none."""
    if value is None:
        return "—"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude == 0:
        return "0"
    decimals = max(0, 3 - math.floor(math.log10(magnitude)))  # four significant digits
    if abs(round(value, decimals)) >= 1000:  # 999.96 rounds up to 1,000
        return f"{value:,.0f}"
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{value:.0f}"


def with_unit(value: float | None, unit: str) -> str:
    """`4,200 tokens/s`; a fraction has no unit word."""
    return number(value) if unit == "fraction" else f"{number(value)} {unit}"


def interval_words(low: float | None, high: float | None, figure: dict | None = None) -> str:
    """`(0 – 2,673)`; an interval with an open end (the run was too short to bound that side) is
    never printed as infinite: `(not estimable from 80 requests (368 needed))` where the figure
    says how many would resolve it, else `(not estimable from 80 requests)`."""
    if low is not None and high is not None:
        return f"({number(low)} – {number(high)})"
    return f"({not_estimable_words(figure or {})})"


def not_estimable_words(figure: dict) -> str:
    """`not estimable from n requests (m needed)`, or without `(m needed)` where the figure has no
    requests_to_resolve; the words of DESIGN.md for an interval the run could not bound."""
    n = figure.get("n")
    needed = figure.get("requests_to_resolve")
    text = f"not estimable from {number(n)} requests" if n is not None else "not estimable"
    return f"{text} ({number(needed)} needed)" if needed is not None else text


def where(figure: dict) -> str:
    if figure["metric"] == "accuracy":
        return ON_THE_SLICE
    return WHERE[figure.get("basis") or metrics.PRODUCTION_LOAD]


def measured_words(figure: dict, at: bool = True) -> str:
    """`990 (0 – 2,673) at the vendor's own conditions`, or why there is no value; `at=False`:
    `990 (0 – 2,673) measured` (the line already says where)."""
    place = where(figure) if at else "measured"
    if figure.get("measured") is None:
        why = figure.get("reason") or "no value"
        return f"not measured{' ' + where(figure) if at else ''} ({why})"
    return f"{number(figure['measured'])} {interval_words(figure.get('ci_low'), figure.get('ci_high'), figure)} {place}"


def tolerance_words(figure: dict) -> str:
    """`tolerance 10 %, claim.tolerance.throughput, default`: the tolerance the verdict used and
    its source's setting (the figure's `tolerance_source` holds the whole source); empty in a pack
    written before tolerances."""
    if figure.get("tolerance") is None:
        return ""
    setting = (figure.get("tolerance_source") or "").split(":", 1)[0]
    return f"tolerance {figure['tolerance'] * 100:g} %" + (f", {setting}" if setting else "")


def verdict_words(figure: dict) -> str:
    """The verdict word; an inconclusive one read over a window the steady-state tests rejected says
    so (a far-off value would otherwise read as merely undecided)."""
    word = figure.get("verdict") or ("not judged: served demand" if figure.get("not_judged") else "no verdict")
    return f"{word} (no steady window)" if word == INCONCLUSIVE and figure.get("no_steady_window") else word


def claim_line(figures: list[dict], at: bool = True) -> str:
    """One claimed figure of one candidate in words, over its measurements (`figures`: the same
    metric at one or more bases, in the order to tell them): one verdict when they agree, each
    measurement's own otherwise, and the tolerance beside it. `at=False` leaves out where each was
    measured (for a line that already says where)."""
    first = figures[0]
    entry = metrics.metric(first["metric"])
    claimed = f"{entry.display}: {with_unit(first['claimed'], entry.unit)} claimed"
    verdicts = list(dict.fromkeys(verdict_words(f) for f in figures))
    tolerance = next((tolerance_words(f) for f in figures if tolerance_words(f)), "")
    beside = f" ({tolerance})" if tolerance else ""
    if len(verdicts) == 1:
        return f"{claimed}, {', '.join(measured_words(f, at) for f in figures)}: {verdicts[0]}{beside}"
    each = ", ".join(f"{measured_words(f, at)}: {verdict_words(f)}" for f in figures)
    return f"{claimed}, {each}{beside}"


def claims_in_words(figures: list[dict], at: bool = False) -> str:
    """Every claimed figure among `figures` (one candidate's), a `claim_line` each, joined by `; `;
    a metric measured at several bases is one line."""
    claimed = [f for f in figures if f.get("claimed") is not None]
    by_metric: dict[str, list[dict]] = {}
    for f in claimed:
        by_metric.setdefault(f["metric"], []).append(f)
    return "; ".join(claim_line(group, at) for group in by_metric.values())
