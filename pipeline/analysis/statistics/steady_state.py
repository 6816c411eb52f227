"""A detected steady state: the window every figure is read over, tested rather than assumed.

The window is a span of issue (send) times, as MLCommons Endpoints' steady-state design defines it
(docs/steady-state-detection.md, Aug 2026): every request sent inside it counts, however long it
then takes. The configured window (first send + `warmup_s` to the last end − `cooldown_s`) is the
candidate; `sql/steady_bins.sql` cuts it into `STEADY_BINS` equal spans of send time and gives each
span's TTFT and TPOT medians (the steadiness signals: queueing shows in TTFT, decode contention in
TPOT; E2E is left out, as it follows the output-length mix). Inside the window, for each series:

- a **trend test**: Mann–Kendall (Kendall's tau of the span medians against their order,
  `scipy.stats.kendalltau`), failing when significant at `ALPHA` (Bonferroni over the window's
  four tests, so a steady run fails one by chance at most 5 % of the time) *and* the Theil–Sen drift over the
  window is at least `MIN_RELATIVE_CHANGE` of the median (the design's effect-size floor: with
  enough spans a negligible drift is significant);
- a **level-shift test**: Pettitt's rank change-point test (the CUSUM of rank sums; the design's
  level-shift detector; its p-value by a seeded permutation test), failing when significant (as
  above) and the medians before and after the change differ by at least `MIN_RELATIVE_CHANGE`.

A window that fails either is trimmed once, when the change lies in its first half (a leading
ramp: the spans up to the change are dropped) and the spans left are at least `MIN_BINS`, and then
tested again. A window that still fails, or whose change lies in its second half (the run changed
regime or kept drifting), has **no steady window**. So does one shorter than its **minimum
length**: max(5 × the window's E2E p90, the precision bound) — the precision bound is the spans
needed to hold the TPOT (else TTFT) level within `PRECISION` at 95 % (k* = (1.96 · CoV / ε)²,
MLCommons' `T_precision`), counted only when it asks for more than `MIN_BINS` spans. The design's
600 s floor is left out: a buyer's replay is often a minute of traffic.

With no steady window the figures are still read over the configured window, and carry the reason:
no verdict holds on them (`pipeline.analysis.judge.figures.judged` makes them inconclusive).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from scipy.stats import kendalltau, rankdata, theilslopes

from pipeline.duck.session import QuerySession

STEADY_BINS = 20  # equal spans of send time the configured window is cut into
MIN_BINS = 5  # the fewest spans a test (and a trimmed window) may rest on
ALPHA = 0.05  # the significance level of the four tests together (Bonferroni: each at ALPHA / 4)
TESTS_PER_WINDOW = 4  # trend and level shift, on TPOT and on TTFT
MIN_RELATIVE_CHANGE = 0.05  # a drift or shift smaller than 5 % of the level is noise (the design's floor)
PERMUTATIONS, PERMUTATION_SEED = 1999, 0  # the level-shift test's p-value: seeded, so a pack re-computes
PRECISION = 0.05  # ε: the level's relative half-width the precision bound asks for
Z_PRECISION = 1.96
RELAXATION_MULTIPLE = 5  # the window is at least 5 × the E2E p90 (queueing transients)
SERIES = ("tpot_ms_p50", "ttft_ms_p50")  # the steadiness signals, per span of send time
TREND, LEVEL_SHIFT = "trend (Mann-Kendall)", "level shift (Pettitt)"
PASSES, FAILS = "passes", "fails"

STEADY_STATE_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("load_level", pa.float64()),
        ("replay_start_ns", pa.int64()),
        ("configured_start_ns", pa.int64()),
        ("configured_end_ns", pa.int64()),
        ("window_start_ns", pa.int64()),  # the window the figures are read over
        ("window_end_ns", pa.int64()),
        ("steady_window", pa.bool_()),  # false: no steady window (`reason` says why)
        ("trimmed_bins", pa.int64()),  # leading spans dropped (a ramp)
        ("window_s", pa.float64()),
        ("min_length_s", pa.float64()),
        ("min_length_term", pa.string()),  # which bound set it: 5 × E2E p90 or the precision bound
        ("e2e_ms_p90", pa.float64()),
        ("precision_bins", pa.int64()),  # k*
        ("reason", pa.string()),
        ("tests", pa.string()),  # every test's statistic, p-value and decision, as JSON (the pack shows them)
    ]
)

TEST_FIELDS = ("test", "series", "pass_number", "bins", "statistic", "p_value", "relative_change", "at_bin", "decision")


@dataclass(frozen=True)
class TestResult:
    """One test on one series of span medians: its statistic, p-value, the change it measured
    (relative to the series' median), where (a level shift's first span after the change) and
    whether the window passes it."""

    test: str
    series: str
    pass_number: int  # 1: the configured window, 2: after trimming
    bins: int
    statistic: float | None
    p_value: float | None
    relative_change: float | None
    at_bin: int | None
    decision: str


def mann_kendall(values: Sequence[float]) -> tuple[float, float, float]:
    """(tau, two-sided p-value, Theil–Sen drift over the series relative to its median)."""
    y = np.asarray(values, dtype=float)
    order = np.arange(len(y))
    tau, p = kendalltau(order, y)
    if math.isnan(tau):  # a constant series: no trend at all
        return 0.0, 1.0, 0.0
    slope = theilslopes(y, order).slope
    level = float(np.median(y))
    drift = slope * (len(y) - 1) / level if level else 0.0
    return float(tau), float(p), float(drift)


def pettitt(values: Sequence[float]) -> tuple[float, float, int, float]:
    """Pettitt's change-point test: (K, two-sided p-value, the first index after the change, the
    shift of the medians after vs before relative to the series' median). K is the largest |U_t|,
    U_t = 2 · (rank sum of the first t) − t(n + 1), the Mann–Whitney statistic of a split at t (ties
    get average ranks). The p-value is a seeded permutation test: Pettitt's asymptotic bound
    2·exp(−6K²/(n³ + n²)) can never reach 0.05 with ten points."""
    y = np.asarray(values, dtype=float)
    ranks = rankdata(y)
    k, split = _pettitt_k(ranks)
    rng = np.random.default_rng(PERMUTATION_SEED)
    # row by row, `permuted` draws the very stream of one `rng.permutation(ranks)` after another, which
    # every pack was made with (tests/unit/test_steady_state.py), ~4x sooner; their K all at once
    permuted = rng.permuted(np.tile(ranks, (PERMUTATIONS, 1)), axis=1)
    exceeding = int(np.count_nonzero(_pettitt_ks(permuted) >= k - 1e-9))
    p = (1 + exceeding) / (1 + PERMUTATIONS)
    level = float(np.median(y))
    shift = (float(np.median(y[split:])) - float(np.median(y[:split]))) / level if level else 0.0
    return k, p, split, shift


def _pettitt_k(ranks: np.ndarray) -> tuple[float, int]:
    u = _pettitt_u(ranks)
    at = int(np.argmax(np.abs(u)))
    return float(abs(u[at])), at + 1


def _pettitt_ks(rows: np.ndarray) -> np.ndarray:
    """K of each row of ranks."""
    return np.abs(_pettitt_u(rows)).max(axis=-1)


def _pettitt_u(ranks: np.ndarray) -> np.ndarray:
    """U_t for t = 1 … n − 1 along the last axis (one series of ranks, or one a row)."""
    n = ranks.shape[-1]
    return 2 * np.cumsum(ranks, axis=-1)[..., :-1] - np.arange(1, n) * (n + 1)


def _tests(series: dict[str, list[float]], pass_number: int) -> list[TestResult]:
    results = []
    for name, values in series.items():
        if len(values) < MIN_BINS:
            continue
        tau, p, drift = mann_kendall(values)
        fails = p < ALPHA / TESTS_PER_WINDOW and abs(drift) >= MIN_RELATIVE_CHANGE
        results.append(
            TestResult(TREND, name, pass_number, len(values), tau, p, drift, None, FAILS if fails else PASSES)
        )
        k, p, at, shift = pettitt(values)
        fails = p < ALPHA / TESTS_PER_WINDOW and abs(shift) >= MIN_RELATIVE_CHANGE
        results.append(
            TestResult(LEVEL_SHIFT, name, pass_number, len(values), k, p, shift, at, FAILS if fails else PASSES)
        )
    return results


def _series(bins: list[dict], start: int) -> dict[str, list[float]]:
    """Each signal's span medians from span `start` on (spans without a successful request have none)."""
    return {
        name: [b[name] for b in bins[start:] if b[name] is not None]
        for name in SERIES
        if any(b[name] is not None for b in bins[start:])
    }


def _precision_bins(series: dict[str, list[float]]) -> int | None:
    """k*: the spans that hold the level within PRECISION at 95 % (TPOT's series, else TTFT's)."""
    values = series.get("tpot_ms_p50") or series.get("ttft_ms_p50")
    if not values or len(values) < 2 or not np.mean(values):
        return None
    cov = float(np.std(values, ddof=1) / np.mean(values))
    return max(math.ceil((Z_PRECISION * cov / PRECISION) ** 2), MIN_BINS)


def judge_window(bins: list[dict]) -> dict:
    """One candidate's (and load level's) window from its spans (rows of sql/steady_bins.sql, in
    order): the window kept, whether it is steady and why not, and every test run."""
    first = bins[0]
    start_ns, end_ns = first["window_start_ns"], first["window_end_ns"]
    row = {
        "candidate": first["candidate"],
        "load_level": first["load_level"],
        "replay_start_ns": first["replay_start_ns"],
        "configured_start_ns": start_ns,
        "configured_end_ns": end_ns,
        "window_start_ns": start_ns,
        "window_end_ns": end_ns,
        "e2e_ms_p90": first["e2e_ms_p90"],
        "trimmed_bins": 0,
    }
    results: list[TestResult] = []
    reason = None
    series = _series(bins, 0)
    if end_ns <= start_ns or sum(b["requests_ok"] for b in bins) == 0:
        reason = "no steady window: the configured window holds no successful request"
    elif min((len(v) for v in series.values()), default=0) < MIN_BINS:
        reason = f"no steady window: fewer than {MIN_BINS} of {len(bins)} spans of the window hold a successful request"
    else:
        results = _tests(series, 1)
        failed = [r for r in results if r.decision == FAILS]
        if failed:
            trim = _leading_ramp(failed, len(bins))
            if trim is None:
                reason = "no steady window: " + _failures(failed) + " in the window's second half"
            else:
                trimmed = _series(bins, trim)
                retested = _tests(trimmed, 2)
                results += retested
                still = [r for r in retested if r.decision == FAILS]
                row["trimmed_bins"] = trim
                row["window_start_ns"] = bins[trim]["bin_start_ns"]
                series = trimmed
                if min((len(v) for v in trimmed.values()), default=0) < MIN_BINS:
                    reason = (
                        f"no steady window: {_failures(failed)}, and fewer than {MIN_BINS} spans with a reply "
                        f"after the first {trim}"
                    )
                elif still:
                    reason = "no steady window: " + _failures(still) + f" after dropping the first {trim} spans"
    row["window_s"] = (row["window_end_ns"] - row["window_start_ns"]) / 1e9 if end_ns > start_ns else 0.0
    row |= _minimum_length(series, row, len(bins))
    if reason is None and row["window_s"] < row["min_length_s"]:
        reason = (
            f"no steady window: the window is {row['window_s']:.3g} s, shorter than its minimum length "
            f"{row['min_length_s']:.3g} s ({row['min_length_term']})"
        )
    if reason is None and row["trimmed_bins"]:
        reason = f"a leading ramp of {row['trimmed_bins']} of {len(bins)} spans trimmed"
    if reason is not None and reason.startswith("no steady window"):  # the figures stay over the configured window
        row["window_start_ns"] = start_ns
    row["steady_window"] = reason is None or not reason.startswith("no steady window")
    row["reason"] = reason
    row["tests"] = tests_json(results)
    return row


def _leading_ramp(failed: list[TestResult], bins: int) -> int | None:
    """The spans to drop when every failure is a ramp at the window's start: the latest level
    shift's change point in the first half (a trend alone: the first half). None: not a leading ramp."""
    shifts = [r.at_bin for r in failed if r.test == LEVEL_SHIFT and r.at_bin is not None]
    trim = max(shifts) if shifts else bins // 2
    if trim > bins // 2 or bins - trim < MIN_BINS:
        return None
    return trim


def _failures(failed: list[TestResult]) -> str:
    return ", ".join(
        f"{r.test} on {r.series.removesuffix('_p50').replace('_ms', '')} p50 "
        f"({r.relative_change:+.0%}, p = {r.p_value:.2g})"
        for r in failed
    )


def _minimum_length(series: dict[str, list[float]], row: dict, bins: int) -> dict:
    """max(5 × E2E p90, the precision bound k* × a span's length, when k* > MIN_BINS)."""
    relaxation = RELAXATION_MULTIPLE * (row["e2e_ms_p90"] or 0.0) / 1000
    k = _precision_bins(series)
    span_s = max(row["configured_end_ns"] - row["configured_start_ns"], 0) / 1e9 / bins
    precision = k * span_s if k is not None and k > MIN_BINS else 0.0
    if precision > relaxation:
        return {
            "min_length_s": precision,
            "min_length_term": f"precision: {k} spans of {span_s:.3g} s",
            "precision_bins": k,
        }
    term = f"{RELAXATION_MULTIPLE} × E2E p90 {row['e2e_ms_p90'] or 0:.4g} ms"
    return {"min_length_s": relaxation, "min_length_term": term, "precision_bins": k}


def tests_json(results: list[TestResult]) -> str:
    return json.dumps([{field: getattr(r, field) for field in TEST_FIELDS} for r in results])


def steady_state(bins: pa.Table) -> pa.Table:
    """Every candidate's (and load level's) window from sql/steady_bins.sql's spans."""
    groups: dict[tuple, list[dict]] = {}
    for row in bins.to_pylist():
        groups.setdefault((row["candidate"], row["load_level"]), []).append(row)
    rows = [judge_window(sorted(spans, key=lambda b: b["bin"])) for spans in groups.values()]
    return pa.Table.from_pylist(rows, schema=STEADY_STATE_SCHEMA)


def bind_detected(session: QuerySession) -> None:
    """Detect the windows and bind them as `steady_state`, which sql/steady_requests.sql reads (a
    pack's older copy of it computes its own window: nothing to bind)."""
    if session.queries.reads("steady_requests", "steady_state"):
        session.bind("steady_state", steady_state(session.run("steady_bins")))


# the throughput table's columns from the window's row (the production load: one window per candidate)
THROUGHPUT_COLUMNS = {
    "steady_window": ("steady_window", pa.bool_()),
    "steady_reason": ("reason", pa.string()),
    "steady_trimmed_bins": ("trimmed_bins", pa.int64()),
    "steady_min_length_s": ("min_length_s", pa.float64()),
    "steady_min_length_term": ("min_length_term", pa.string()),
    "steady_tests": ("tests", pa.string()),
}


def with_steady_state(session: QuerySession, table: pa.Table) -> pa.Table:
    """The throughput rows with their window's steady-state result: whether it is steady and why
    not, its start and end from the first send (seconds; the configured window's too), the minimum
    length and every test (JSON). None where the window was not detected (a pack's older queries)."""
    rows = {}
    if session.queries.reads("steady_requests", "steady_state"):
        rows = {row["candidate"]: row for row in session.staged("steady_state").to_pylist()}
    candidates = table.column("candidate").to_pylist()
    for name, (key, kind) in THROUGHPUT_COLUMNS.items():
        table = table.append_column(name, pa.array([rows.get(c, {}).get(key) for c in candidates], kind))
    for name, key in (
        ("steady_window_start_s", "window_start_ns"),
        ("steady_window_end_s", "window_end_ns"),
        ("configured_window_start_s", "configured_start_ns"),
        ("configured_window_end_s", "configured_end_ns"),
    ):
        values = [_from_start(rows.get(c), key) for c in candidates]
        table = table.append_column(name, pa.array(values, pa.float64()))
    return table


def _from_start(row: dict | None, key: str) -> float | None:
    if row is None or row.get(key) is None:
        return None
    return (row[key] - row["replay_start_ns"]) / 1e9


def unsteady_windows(throughput_rows: list[dict]) -> dict[str, str]:
    """Each candidate whose window the steady-state tests rejected, with the reason (the figures'
    verdicts, `pipeline.analysis.judge.figures.judged`)."""
    rows = [row for row in throughput_rows if row.get("steady_window") is False]
    return {row["candidate"]: row.get("steady_reason") or "no steady window" for row in rows}
