"""A claimed figure in words, with its numbers, for the lines a committee reads first
(`summary.py`'s executive summary): the figure's display name from the metric catalogue, the claim
with its unit, each measurement with its interval and where it was made, the verdict and the
tolerances it was judged with are the glossary's (one entry each), not repeated here. For example:

    Output tokens/s: 4,200 tokens/s claimed, 990 (0 – 2,673) at the vendor's own conditions,
    1,589 (1,064 – 2,113) at your SLA: not reproduced

and, for a line of the first screen (at most `LINE_LIMIT` characters), the claims of one place
summarised by verdict, the one furthest from its claim named (`verdict_summary`):

    5 of 6 claims not reproduced (worst TTFT p99 6,770 ms vs 400 ms claimed), 1 inconclusive

Plain data in (the pack's figures, each with its basis), a string out: it reads what analysis made
and makes no number of its own.
"""

from __future__ import annotations

import math

from pipeline.analysis.declare import metrics
from pipeline.analysis.statistics.stats import HOLDS, HOLDS_WITHIN_TOLERANCE, INCONCLUSIVE, NOT_REPRODUCED
from pipeline.pack.document.parts import FIRST_SCREEN_LINE

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
    never printed as infinite: `(≥ 6,607, its upper end not estimable from 80 requests (368
    needed))` where the figure says how many would resolve it, else without `(368 needed)`; with
    neither end, `(not estimable from 80 requests)`."""
    if low is not None and high is not None:
        return f"({number(low)} – {number(high)})"
    words = not_estimable_words(figure or {})
    if low is not None:
        return f"(≥ {number(low)}, its upper end {words})"
    if high is not None:
        return f"(≤ {number(high)}, its lower end {words})"
    return f"({words})"


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


def verdict_words(figure: dict) -> str:
    """The verdict word; an inconclusive one read over a window the steady-state tests rejected says
    so (a far-off value would otherwise read as merely undecided)."""
    word = figure.get("verdict") or ("not judged: served demand" if figure.get("not_judged") else "no verdict")
    return f"{word} (no steady window)" if word == INCONCLUSIVE and figure.get("no_steady_window") else word


def claim_line(figures: list[dict], at: bool = True) -> str:
    """One claimed figure of one candidate in words, over its measurements (`figures`: the same
    metric at one or more bases, in the order to tell them): one verdict when they agree, each
    measurement's own otherwise (the tolerance each used is the glossary's). `at=False` leaves out
    where each was measured (for a line that already says where)."""
    first = figures[0]
    entry = metrics.metric(first["metric"])
    claimed = f"{entry.display}: {with_unit(first['claimed'], entry.unit)} claimed"
    verdicts = list(dict.fromkeys(verdict_words(f) for f in figures))
    if len(verdicts) == 1:
        return f"{claimed}, {', '.join(measured_words(f, at) for f in figures)}: {verdicts[0]}"
    each = ", ".join(f"{measured_words(f, at)}: {verdict_words(f)}" for f in figures)
    return f"{claimed}, {each}"


def claims_in_words(figures: list[dict], at: bool = False) -> str:
    """Every claimed figure among `figures` (one candidate's), a `claim_line` each, joined by `; `;
    a metric measured at several bases is one line."""
    claimed = [f for f in figures if f.get("claimed") is not None]
    by_metric: dict[str, list[dict]] = {}
    for f in claimed:
        by_metric.setdefault(f["metric"], []).append(f)
    return "; ".join(claim_line(group, at) for group in by_metric.values())


LINE_LIMIT = FIRST_SCREEN_LINE  # a line of the first screen, at most (the pack's model enforces it)
# the verdicts of a summary, worst first: the first group present names its count of all claims
WORST_FIRST = (NOT_REPRODUCED, f"{INCONCLUSIVE} (no steady window)", INCONCLUSIVE, HOLDS_WITHIN_TOLERANCE, HOLDS)
PLURAL = {HOLDS: "hold", HOLDS_WITHIN_TOLERANCE: "hold within tolerance"}  # "3 hold", "1 holds"


def _how_far_off(figure: dict) -> float:
    """How far the measurement lies from the claim on the claim's bad side, to pick the claim a
    summary names (an order only: no number of it is printed); a figure not measured comes last."""
    measured, claimed = figure.get("measured"), figure.get("claimed")
    if measured is None or claimed is None:
        return -math.inf
    worse, better = (claimed, measured) if metrics.metric(figure["metric"]).larger_is_better else (measured, claimed)
    return worse / better if better > 0 else (math.inf if worse > 0 else 0.0)


def against_claim(figure: dict) -> str:
    """`TTFT p95 6,665 vs 250 ms claimed`: the two numbers as the figure has them (its interval is
    in the tables); `TTFT p95 not measured (why)` where there is no value."""
    entry = metrics.metric(figure["metric"])
    if figure.get("measured") is None:
        return f"{entry.display} not measured" + (f" ({figure['reason']})" if figure.get("reason") else "")
    return f"{entry.display} {number(figure['measured'])} vs {with_unit(figure['claimed'], entry.unit)} claimed"


def verdict_summary(figures: list[dict], examples: int = len(WORST_FIRST)) -> str:
    """The claimed figures of one candidate at one place, counted by verdict, worst first:
    `5 of 6 claims not reproduced (worst TTFT p99 6,770 ms vs 400 ms claimed), 1 inconclusive`;
    each group that does not hold, up to `examples` of them, names the claim furthest from its own; one claim
    alone is named with its numbers and verdict: `Accuracy 0.89 vs 0.92 claimed: inconclusive`
    (`Accuracy: inconclusive` without `examples`)."""
    claimed = [f for f in figures if f.get("claimed") is not None]
    if not claimed:
        return "no claimed figure measured here"
    if len(claimed) == 1:
        (figure,) = claimed
        named = against_claim(figure) if examples > 0 else metrics.metric(figure["metric"]).display
        return f"{named}: {verdict_words(figure)}"
    groups: dict[str, list[dict]] = {}
    for figure in claimed:
        groups.setdefault(verdict_words(figure), []).append(figure)
    order = sorted(groups, key=lambda word: WORST_FIRST.index(word) if word in WORST_FIRST else len(WORST_FIRST))
    if order == [HOLDS]:
        return f"all {len(claimed)} claims hold"
    parts: list[str] = []
    for word in order:
        group = groups[word]
        count = f"{len(group)} of {len(claimed)} claims" if not parts else str(len(group))
        text = f"{count} {PLURAL.get(word, word) if len(group) > 1 else word}"
        if examples > 0 and word not in (HOLDS, HOLDS_WITHIN_TOLERANCE):
            examples -= 1
            worst = max(group, key=_how_far_off)
            text += f" ({'worst ' if len(group) > 1 else ''}{against_claim(worst)})"
        parts.append(text)
    return ", ".join(parts)


def fit(head: str, *tails: str, limit: int = LINE_LIMIT) -> str:
    """A line of the first screen within `limit` characters: `head`, then each tail (its own
    separator included) while the line stays within it; a head too long alone is cut at a word
    with `…` (what it left out is in the tables below)."""
    line = head if len(head) <= limit else head[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    for tail in tails:
        if len(line) + len(tail) > limit:
            break
        line += tail
    return line
