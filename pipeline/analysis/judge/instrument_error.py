"""The instrument error: the client's own timing error (DESIGN.md, "Instrument error"), measured per
candidate by sql/instrument_error.sql (against the wire where the run recorded a calibration, from
the loop's receipt lag everywhere, and from the judged window's send lag in an uncapped open loop)
and carried beside each production-load latency figure (`instrument_error_ms`,
`instrument_error_source` in `data/figures.parquet`). The arms' latency figures carry their own:
the loop receipt lag while each arm ran (`arm_timings.arm_loop_lag_p99_ms`, into `arm_figures`),
and a vendor-conditions verdict is judged with it by the same rule.

A figure carries it where one request's latency is one interval between two of the client's own
stamps, each as late as the loop was busy: TTFT, TTFO, E2E (from the actual or the planned send) and
ITL (each gap is two receipts). TPOT is exempt: it is (last − first token) / (output tokens − 1), so
the two late stamps are spread over every token of the reply and its error is the lag ÷ (tokens − 1),
a small fraction of the lag for any reply worth a per-token figure.

Where the error's p99 exceeds a quarter of the claim's tolerance (C·t / 4) a *holds* cannot stand
(`stats.instrument_verdict`); the figure's `to_resolve` then says what the error was, against what,
and what fixes it (`resolution_words`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.analysis.declare.catalogue import BY_NAME, PRODUCTION_LOAD, VENDOR_CONDITIONS
from pipeline.analysis.statistics.stats import (
    INSTRUMENT_ERROR_RULE,
    INSTRUMENT_ERROR_SHARE,
    INSTRUMENT_MISS_RULE,
    INTERVAL_RULE,
    instrument_verdict,
)
from pipeline.analysis.tabulate.repeats import first_run
from pipeline.analysis.tabulate.tables import steady_session
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.spec import Spec

QUERY = "instrument_error"
ARM_LOOP_LAG = "arm_loop_lag_p99_ms"  # arm_timings' column (pipeline/replay/conditions/arms.py)
LOOP_LAG_SOURCE = "loop receipt lag"
# the latency families (sql/latency_percentiles.sql's `metric`) whose figures carry the error
CARRIED_FAMILIES = frozenset(
    {"ttft_ms", "ttfo_ms", "e2e_ms", "itl_ms", "ttft_from_schedule_ms", "e2e_from_schedule_ms"}
)
EXEMPT_FAMILIES = {"tpot_ms": "the two late stamps are spread over the reply's tokens: the lag ÷ (tokens − 1)"}
FIX = "fewer streams a process (workload.replay.shards: auto), a smaller rate or a bigger machine"
# an arm runs the claim's concurrency in one process: only the client's machine can change
ARM_FIX = "a client machine with faster cores (the arm sends the claim's concurrency from one process)"

REPLAY_LAG_SCHEMA = pa.schema(
    [("candidate", pa.string()), ("loop_lag_p99_ms", pa.float64()), ("wire_lag_p99_ms", pa.float64())]
)


def replay_lags(replay_summary: dict | None) -> pa.Table:
    """The replay summary's per-candidate lags as the table sql/instrument_error.sql reads
    (`replay_lag`): the loop probe's p99 and, where the run recorded one, the wire calibration's. A
    repeated replay's summary keeps each run's own (`runs`): the worst of them, as the combined
    figure is over every run."""
    summary = replay_summary or {}
    rows = []
    for candidate, stats in sorted((summary.get("candidates") or {}).items()):
        row = {"candidate": candidate}
        for key in ("loop_lag_p99_ms", "wire_lag_p99_ms"):
            runs = [run.get(key) for run in summary.get("runs") or [] if run.get(key) is not None]
            row[key] = stats.get(key) if stats.get(key) is not None else max(runs, default=None)
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=REPLAY_LAG_SCHEMA)


def send_lag_counts(spec: Spec) -> bool:
    """Whether a request's schedule lag is the loop's lateness alone: only in an open loop with no
    cap on requests in flight (a capped one's also holds the wait for a slot; a closed loop's
    planned send is the instant it went)."""
    replay = spec.workload.replay
    return replay.mode != "concurrency" and replay.max_concurrency is None


def instrument_errors(
    spec: Spec, raw_timings: Path | pa.Table, replay_summary: dict | None, queries: QueryCatalog = REPO_QUERIES
) -> dict[str, tuple[float, str]]:
    """Each candidate's (instrument error p99 in ms, its source) over the judged window; a candidate
    with no measure is absent."""
    with steady_session(raw_timings, spec, queries) as session:
        session.bind("replay_lag", replay_lags(replay_summary))
        session.params["send_lag_counts"] = send_lag_counts(spec)
        rows = session.run(QUERY).to_pylist()
    return {row["candidate"]: (row["instrument_error_ms"], row["instrument_error_source"]) for row in rows}


def carries(item: dict) -> bool:
    """A latency figure of a family that carries the error (TPOT is exempt), at the production load
    or at the vendor's conditions (`carries_at`)."""
    return carries_at(item["metric"], item.get("basis") or PRODUCTION_LOAD)


def carries_at(metric: str, basis: str) -> bool:
    """Whether `metric` read on `basis` (production load, vendor's conditions) carries the error."""
    entry = BY_NAME.get(metric)
    if entry is None or entry.kind != "latency percentile" or basis not in (PRODUCTION_LOAD, VENDOR_CONDITIONS):
        return False
    source = entry.sources.get(basis)
    return source is not None and source.row_metric in CARRIED_FAMILIES


def with_instrument_error(figures: list[dict], errors: dict[str, tuple[float, str]]) -> list[dict]:
    """Each production-load latency figure that carries the error with it, re-judged
    (`rejudged`)."""
    for item in figures:
        found = errors.get(item["candidate"])
        if found is None or item.get("repeat") is not None or (item.get("basis") or PRODUCTION_LOAD) != PRODUCTION_LOAD:
            continue
        if carries(item):
            item["instrument_error_ms"], item["instrument_error_source"] = found
            rejudged(item)
    return figures


def rejudged(item: dict) -> dict:
    """`item` (carrying `instrument_error_ms`) re-judged with its error (`stats.instrument_verdict`):
    a hold the error could make is inconclusive; a miss over the interval whose low end, less the
    error, no longer clears the claim with its tolerance too."""
    error_ms = item.get("instrument_error_ms")
    if error_ms is None or not carries(item):
        return item
    # the low end decides a miss only where the window's interval decided it (not an unsteady bound)
    ci_low = item.get("ci_low") if item.get("decision_rule") == INTERVAL_RULE else None
    word, rule = instrument_verdict(
        item.get("verdict"), item.get("claimed"), item.get("tolerance") or 0.0, error_ms, entry_kind(item), ci_low
    )
    if rule is not None:
        item |= {"verdict": word, "decision_rule": rule}
    return item


def carried_error(row: dict) -> dict:
    """An arm's latency figure's instrument error (its `arm_figures` row), where it has one."""
    if row.get("instrument_error_ms") is None:
        return {}
    return {key: row[key] for key in ("instrument_error_ms", "instrument_error_source")}


def arm_instrument_error(timings: pa.Table) -> float | None:
    """One arm's instrument error (ms): the client's loop receipt lag p99 while it ran (the worst,
    where the rows hold several runs), from `arm_timings.arm_loop_lag_p99_ms`; None for rows written
    before it was recorded, or by a run that did not probe."""
    if ARM_LOOP_LAG not in timings.schema.names:
        return None
    return pc.max(timings.column(ARM_LOOP_LAG)).as_py()


def judged_with_instrument_error(
    spec: Spec,
    figures: list[dict],
    raw_timings: Path | pa.Table,
    replay_summary: dict,
    queries: QueryCatalog = REPO_QUERIES,
) -> list[dict]:
    """The figures with the instrument error measured over the run the analysis tables read (a
    repeated replay's first: `repeats.first_run`) and carried (`with_instrument_error`)."""
    if not any(carries(item) for item in figures):
        return figures
    timings = first_run(raw_timings) if isinstance(raw_timings, Path) else raw_timings
    return with_instrument_error(figures, instrument_errors(spec, timings, replay_summary, queries))


def entry_kind(item: dict) -> str:
    return BY_NAME[item["metric"]].kind


def decided_by_instrument(item: dict) -> bool:
    """Whether the instrument error made the figure inconclusive (its `decision_rule`)."""
    return item.get("decision_rule") in (INSTRUMENT_ERROR_RULE, INSTRUMENT_MISS_RULE)


def resolution_words(item: dict) -> str:
    """What an inconclusive figure the instrument error decided needs (`decisive.to_resolve`): the
    error and its source, what it was held against, and the fix."""
    claimed, tolerance, error_ms = item["claimed"], item.get("tolerance") or 0.0, item["instrument_error_ms"]
    error = f"the client's timing error p99 is {error_ms:.3g} ms ({item.get('instrument_error_source')})"
    if item.get("decision_rule") == INSTRUMENT_MISS_RULE:
        against = (
            f"the interval's low end {item['ci_low']:.4g} ms less it is within the claim with its tolerance "
            f"({claimed * (1 + tolerance):.4g} ms), so the miss may be the client's own"
        )
    else:
        against = (
            f"over a quarter of the claim's tolerance ({INSTRUMENT_ERROR_SHARE * claimed * tolerance:.3g} ms: "
            f"¼ × {tolerance:.0%} of {claimed:g} ms)"
        )
    fix = ARM_FIX if item.get("basis") == VENDOR_CONDITIONS else FIX
    return f"not by length: {error}, {against}; {fix} brings it down"
