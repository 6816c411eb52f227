"""The arms' checks: each arm sent what it planned (one row per planned request, ids `<arm>-<n>`
for n below the arm's plan length, each once) and stayed within its bound."""

from __future__ import annotations

from collections import Counter

from pipeline.plan.arms import (
    ARRIVAL_PROCESS,
    REQUEST_SETTINGS,
    REQUEST_STRUCTURE,
    VENDOR_CONDITIONS,
    closed_loop,
    ladder_request_count,
    runnable,
    vendor_request_count,
)
from pipeline.quality.outcome import Outcome, explains
from pipeline.spec import Spec


def planned_arm_requests(spec: Spec, production_requests: int, request_fields: bool = False) -> dict[str, int]:
    """How many requests each arm plans (the arrival-process step: as many as (d), when it ran;
    the request-settings step only where a production request carries `request_fields`)."""
    arms, conditions = spec.workload.replay.arms, spec.claim.conditions
    if arms is None or not runnable(conditions):
        return {}
    planned = {VENDOR_CONDITIONS: vendor_request_count(conditions, arms)}
    if arms.ladder and production_requests and closed_loop(conditions):
        ladder = ladder_request_count(conditions, arms)  # the plan over again when it is shorter
        planned.update(dict.fromkeys(("b_prompt_lengths", "c_output_lengths", REQUEST_STRUCTURE), ladder))
        if request_fields:
            planned[REQUEST_SETTINGS] = ladder
    return planned


@explains(
    "the arm timings' request ids against each arm's plan (<arm>-<n> for n below its planned count, "
    "each once, this candidate only)",
    "an arm's replay was cut short or recorded twice (a killed or retried run): run the partition "
    "again; if requests are missing every time, the arm ran into workload.replay.arms.max_duration_s",
)
def arm_timings_complete(rows: list[dict], planned: dict[str, int], candidate: str) -> Outcome:
    """`rows`: the arm timings' candidate, arm and request_id."""
    problems: list[str] = []
    seen = Counter((row["candidate"], row["arm"], row["request_id"]) for row in rows)
    duplicates = [key for key, count in seen.items() if count > 1]
    if duplicates:
        problems.append(f"{len(duplicates)} request(s) recorded twice, e.g. {duplicates[0]}")
    wrong = sorted({row["candidate"] for row in rows} - {candidate})
    if wrong:
        problems.append(f"rows of another candidate: {wrong}")
    by_arm = Counter(row["arm"] for row in rows if row["candidate"] == candidate)
    expected = dict(planned)
    if ARRIVAL_PROCESS in by_arm and REQUEST_STRUCTURE in planned:  # decided after (d): (d)'s requests
        expected[ARRIVAL_PROCESS] = planned[REQUEST_STRUCTURE]
    for arm, count in expected.items():
        ids = {row["request_id"] for row in rows if row["arm"] == arm and row["candidate"] == candidate}
        wanted = {f"{arm}-{index:05d}" for index in range(count)}
        if ids != wanted:
            problems.append(
                f"{arm}: {len(ids)} distinct request(s), planned {count} "
                f"({len(wanted - ids)} missing, {len(ids - wanted)} unplanned)"
            )
    unplanned = sorted(set(by_arm) - set(expected))
    if unplanned:
        problems.append(f"arms nobody planned: {unplanned}")
    return Outcome(
        passed=not problems,
        metadata={"arms": {arm: by_arm.get(arm, 0) for arm in expected}, "problems": "; ".join(problems) or "none"},
    )


@explains(
    "each arm's span (first send to last end) against workload.replay.arms.max_duration_s + one request timeout",
    "the endpoint answered too slowly for the arm's bound: raise workload.replay.arms.max_duration_s "
    "or lower workload.replay.arms.requests",
)
def arm_timings_bounded(rows: list[dict], max_duration_s: float, request_timeout_s: float) -> Outcome:
    """Every arm's span (first send to last end) within its bound plus one request timeout (a
    request sent just before the bound may run that long; the engine cuts it there)."""
    spans: dict[str, tuple[int, int]] = {}
    for row in rows:
        if row["t_sent_ns"] is None or row["t_end_ns"] is None:
            continue
        first, last = spans.get(row["arm"], (row["t_sent_ns"], row["t_end_ns"]))
        spans[row["arm"]] = (min(first, row["t_sent_ns"]), max(last, row["t_end_ns"]))
    seconds = {arm: (last - first) / 1e9 for arm, (first, last) in spans.items()}
    limit = max_duration_s + request_timeout_s
    over = {arm: round(span, 3) for arm, span in seconds.items() if span > limit}
    return Outcome(
        passed=not over,
        metadata={
            "limit_s": limit,
            "span_s": {a: round(s, 3) for a, s in seconds.items()},
            "over": str(over or "none"),
        },
    )


@explains(
    "the arm figures: a row per figure for every arm that ran, each value inside its interval",
    "run the partition's analysis again; if it repeats, report it with data/arm_figures.parquet",
)
def arm_figures_complete(figures: list[dict], ran: set[str], metrics: list[str]) -> Outcome:
    """Every arm that ran has a row per figure, and every interval is around its value."""
    have = {(row["arm"], row["metric"]) for row in figures}
    missing = sorted((arm, metric) for arm in ran for metric in metrics if (arm, metric) not in have)
    outside = [
        (row["arm"], row["metric"])
        for row in figures
        if row["measured"] is not None
        and (
            (row["ci_low"] is not None and row["ci_low"] > row["measured"] + 1e-9)
            or (row["ci_high"] is not None and row["ci_high"] < row["measured"] - 1e-9)
        )
    ]
    return Outcome(
        passed=not missing and not outside,
        metadata={"missing": str(missing or "none"), "value_outside_interval": str(outside or "none")},
    )
