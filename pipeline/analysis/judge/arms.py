"""The arms' figures: each arm analysed on its own by the headline's own queries
(`pipeline.analysis.tabulate.tables.analyse_all` over that arm's rows only), over its steady window.

A closed loop's steady window (sql/arm_window.sql): from the first reply (without the simultaneous
first wave), as long as Little's law at the claimed concurrency says the window's requests occupied
the loop (without the drain); given to the analysis as the
`warmup_s` and `cooldown_s` sql/steady_requests.sql takes, so every figure, its interval and n come
from the same queries and the same window rule as the headline's, and `loadproof verify`
re-computes them from `arm_timings` alone. Which figures: every claimed throughput and latency
figure and the error rate (accuracy and cost are not an arm's business), and always output tokens/s
and requests/s (the ladder's capacity axis and the arrival-process step's rate). Each latency figure
that carries it (`instrument_error.carries_at`) has the arm's instrument error beside it: the
client's loop receipt lag p99 while the arm ran (`arm_timings.arm_loop_lag_p99_ms`).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.analysis.declare import metrics
from pipeline.analysis.declare.catalogue import VENDOR_CONDITIONS
from pipeline.analysis.judge.figures import figure_rows, values_at
from pipeline.analysis.judge.instrument_error import LOOP_LAG_SOURCE, arm_instrument_error, carries_at
from pipeline.analysis.statistics import steady_state
from pipeline.analysis.tabulate.tables import analyse_all
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.duck.session import run_query
from pipeline.plan.arms import ARRIVAL_PROCESS, LADDER, closed_loop
from pipeline.plan.arms import VENDOR_CONDITIONS as VENDOR_ARM
from pipeline.spec import Spec

ARM_QUERIES = ("arm_window",)
# arm_figures' columns (pipeline/contracts/ ARM_FIGURES), then run_id: one row per candidate × arm
# × figure, with the arm's steady window
ARM_FIGURES_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("arm", pa.string()),
        ("axis", pa.string()),
        ("label", pa.string()),
        ("concurrency", pa.int64()),
        ("warmup_s", pa.float64()),
        ("cooldown_s", pa.float64()),
        ("metric", pa.string()),
        ("unit", pa.string()),
        ("measured", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("n", pa.int64()),
        ("interval_method", pa.string()),
        ("no_steady_window", pa.string()),  # the steady-state tests rejected the arm's window: why
        # a latency figure that carries it: the client's loop receipt lag p99 while the arm ran
        ("instrument_error_ms", pa.float64()),
        ("instrument_error_source", pa.string()),
    ]
)
ALWAYS = ("output_tokens_per_s", "requests_per_s")


def arm_metrics(spec: Spec) -> list[str]:
    """The figures every arm reports: the claimed throughput, latency and error-rate figures, and
    output tokens/s and requests/s, in that order (claimed first, as the claim lists them)."""
    claimed = [name for name in spec.claim.figures if VENDOR_CONDITIONS in metrics.metric(name).bases]
    return claimed + [name for name in ALWAYS if name not in claimed]


def window_spec(spec: Spec, warmup_s: float, cooldown_s: float) -> Spec:
    """The spec an arm is analysed with: its own steady window."""
    replay = spec.workload.replay.model_copy(update={"warmup_s": warmup_s, "cooldown_s": cooldown_s})
    return spec.model_copy(update={"workload": spec.workload.model_copy(update={"replay": replay})})


def arm_window(
    timings: pa.Table, concurrency: int, closed_loop: bool = True, queries: QueryCatalog = REPO_QUERIES
) -> tuple[float, float] | None:
    """(warmup_s, cooldown_s) of one candidate's arm rows; None when there is no steady window."""
    params = {"concurrency": concurrency, "closed_loop": closed_loop}
    rows = run_query("arm_window", {"raw_timings": timings}, params, queries=queries).to_pylist()
    if not rows or rows[0]["warmup_s"] is None:
        return None
    return rows[0]["warmup_s"], rows[0]["cooldown_s"]


def one_arm_figures(
    timings: pa.Table, arm: str, candidate: str, spec: Spec, queries: QueryCatalog = REPO_QUERIES
) -> list[dict]:
    """One candidate's arm: a row per figure (no values, n 0, when the arm had no steady window)."""
    concurrency = int(spec.claim.conditions.concurrency or 1)
    # open loops: the arrival-process step, and the vendor's arm at a claimed request rate
    open_loop = arm == ARRIVAL_PROCESS or (arm == VENDOR_ARM and not closed_loop(spec.claim.conditions))
    window = arm_window(timings, concurrency, not open_loop, queries)
    analysed = (
        analyse_all(timings, window_spec(spec, *window), queries=queries, load_figures_only=True) if window else {}
    )
    tables = figure_rows(analysed)
    unsteady = steady_state.unsteady_windows(tables.get("throughput") or []).get(candidate)
    axis, label = LADDER.get(arm, (arm, arm))
    error_ms = arm_instrument_error(timings)
    rows = []
    for metric in arm_metrics(spec):
        measured, low, high, n, method = values_at(tables, metric, VENDOR_CONDITIONS)
        carried = error_ms is not None and carries_at(metric, VENDOR_CONDITIONS)
        rows.append(
            {
                "candidate": candidate,
                "arm": arm,
                "axis": axis,
                "label": label,
                "concurrency": concurrency,
                "warmup_s": window[0] if window else None,
                "cooldown_s": window[1] if window else None,
                "metric": metric,
                "unit": metrics.describe(metric)[0],
                "measured": measured,
                "ci_low": low,
                "ci_high": high,
                "n": n,
                "interval_method": method,
                "no_steady_window": unsteady,
                "instrument_error_ms": error_ms if carried else None,
                "instrument_error_source": LOOP_LAG_SOURCE if carried else None,
            }
        )
    return rows


def arm_figures(arm_timings: Path | pa.Table, spec: Spec, queries: QueryCatalog = REPO_QUERIES) -> pa.Table:
    """Every candidate × arm × figure of `arm_timings`, arms in ladder order."""
    table = arm_timings if isinstance(arm_timings, pa.Table) else pq.read_table(arm_timings)
    order = list(LADDER)
    arms = sorted(set(table.column("arm").to_pylist()), key=lambda a: (order.index(a) if a in order else 99, a))
    rows: list[dict] = []
    for arm in arms:
        arm_rows = table.filter(pc.equal(table.column("arm"), arm))
        for candidate in sorted(set(arm_rows.column("candidate").to_pylist())):
            one = arm_rows.filter(pc.equal(arm_rows.column("candidate"), candidate))
            rows += one_arm_figures(one, arm, candidate, spec, queries)
    return pa.Table.from_pylist(rows, schema=ARM_FIGURES_SCHEMA)


def measured(figures: pa.Table | list[dict], candidate: str, arm: str, metric: str) -> float | None:
    """One figure's measured value (e.g. (d)'s requests/s, the arrival-process step's rate)."""
    rows = figures.to_pylist() if isinstance(figures, pa.Table) else figures
    for row in rows:
        if (row["candidate"], row["arm"], row["metric"]) == (candidate, arm, metric):
            return row["measured"]
    return None
