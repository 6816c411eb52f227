"""Raw timings → decision tables, each computed by DuckDB queries in sql/.

Every table starts from `steady_requests` (the raw timings marked with the steady-state window,
prompt-length bucket and SLA bounds). Percentile ranks are exact binomial order statistics
(`pipeline.stats.order_statistic_ranks`) computed here between two queries; proportions get
Wilson intervals from `pipeline.stats.wilson_interval`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from scipy.stats import norm

from pipeline.figures import PERCENTILES
from pipeline.spec import Spec
from pipeline.sqlsession import QuerySession
from pipeline.stats import order_statistic_ranks, peak_concurrency, wilson_interval

ITL_SLICE_S = 5.0  # above the ITL bound, gaps come from every k-th slice of this many seconds

RANKS_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("metric", pa.string()),
        ("scope", pa.string()),
        ("scope_order", pa.int64()),
        ("percentile", pa.string()),
        ("q", pa.float64()),
        ("n", pa.int64()),
        ("point_rank", pa.int64()),
        ("low_rank", pa.int64()),
        ("high_rank", pa.int64()),
        ("confidence", pa.float64()),
        ("sample_every", pa.int64()),
    ]
)
ACCURACY_VIEW_SCHEMA = pa.schema([("candidate", pa.string()), ("accuracy", pa.float64())])


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for `confidence` (0.95 → 1.96)."""
    return float(norm.ppf(1 - (1 - confidence) / 2))


def analysis_params(spec: Spec) -> dict:
    replay = spec.workload.replay
    return {
        "warmup_s": replay.warmup_s,
        "cooldown_s": replay.cooldown_s,
        "sla_ttft_ms": spec.sla.ttft_ms,
        "sla_tpot_ms": spec.sla.tpot_ms,
        "sla_e2e_ms": spec.sla.e2e_ms,
        "min_attainment": spec.sla.min_attainment,
        "bucket_edges": list(spec.analysis.prompt_token_buckets),
        "z": z_value(spec.analysis.confidence),
    }


def _session(raw_timings: Path | pa.Table, spec: Spec) -> QuerySession:
    session = QuerySession({"raw_timings": raw_timings}, analysis_params(spec))
    session.stage("steady_requests")
    return session


# --- latency ---------------------------------------------------------------------------------


def itl_sample_every(total_gaps: int, max_values: int) -> int:
    """1 (every request) while the gaps fit the bound; else k: every k-th time slice is kept."""
    return max(1, math.ceil(total_gaps / max_values))


def ranks_table(counts: pa.Table, confidence: float, sample_every: int) -> pa.Table:
    """One row per candidate, metric, scope and percentile: the exact order-statistic ranks."""
    rows = []
    for count in counts.to_pylist():
        for name, q in PERCENTILES.items():
            ranks = order_statistic_ranks(count["n"], q, confidence)
            rows.append(
                {
                    **{key: count[key] for key in ("candidate", "metric", "scope", "scope_order", "n")},
                    "percentile": name,
                    "q": q,
                    "point_rank": ranks.point,
                    "low_rank": ranks.low,
                    "high_rank": ranks.high,
                    "confidence": confidence,
                    "sample_every": sample_every if count["metric"] == "itl_ms" else 1,
                }
            )
    return pa.Table.from_pylist(rows, schema=RANKS_SCHEMA)


def _latency(session: QuerySession, spec: Spec) -> pa.Table:
    gaps = session.run("itl_volume").column("gaps")[0].as_py()
    every = itl_sample_every(gaps, spec.analysis.itl_max_values)
    session.params.update(itl_sample_every=every, itl_slice_s=ITL_SLICE_S)
    session.define_view("latency_samples")  # cheap to derive twice from the staged requests
    session.stage("itl_samples")  # bounded by itl_max_values, so it is held once, not read twice
    session.stage("latency_histogram")
    counts = session.run("latency_counts")
    session.bind("ranks", ranks_table(counts, spec.analysis.confidence, every))
    return session.run("latency_percentiles")


def latency_percentiles(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    """TTFT, TPOT, ITL, E2E at p50…p99.9 per candidate and scope, with n and exact intervals."""
    with _session(raw_timings, spec) as session:
        return _latency(session, spec)


# --- throughput, SLA, errors -------------------------------------------------------------------


def throughput_buckets(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    with _session(raw_timings, spec) as session:
        return session.run("throughput_buckets")


def _throughput(session: QuerySession) -> pa.Table:
    session.stage("throughput_buckets")
    table = session.run("throughput")
    events = session.run("concurrency_events")
    peaks = []
    for candidate in table.column("candidate").to_pylist():
        mine = events.filter(pc.equal(events.column("candidate"), candidate))
        peaks.append(peak_concurrency(mine.column("t_sent_ns").to_numpy(), mine.column("t_end_ns").to_numpy()))
    table = table.append_column("peak_concurrency", pa.array(peaks, pa.int64()))
    return with_wilson(table, "requests_good", "requests_in_window", "sla_attainment", session.params["z"])


def throughput(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    """Rates with batch-means intervals, SLA attainment (Wilson), peak and mean concurrency."""
    with _session(raw_timings, spec) as session:
        return _throughput(session)


def error_breakdown(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    """Every planned request by outcome (ok or error type), rate with a Wilson interval."""
    with _session(raw_timings, spec) as session:
        table = session.run("error_breakdown")
        return with_wilson(table, "requests", "requests_planned", "rate", session.params["z"])


def with_wilson(table: pa.Table, successes: str, n: str, name: str, z: float) -> pa.Table:
    """Append `{name}_ci_low` and `{name}_ci_high`: the Wilson interval of successes / n."""
    bounds = [
        wilson_interval(k or 0, m or 0, z)
        for k, m in zip(table.column(successes).to_pylist(), table.column(n).to_pylist())
    ]
    table = table.append_column(f"{name}_ci_low", pa.array([b[0] for b in bounds], pa.float64()))
    return table.append_column(f"{name}_ci_high", pa.array([b[1] for b in bounds], pa.float64()))


# --- cost ------------------------------------------------------------------------------------


def prices_table(spec: Spec) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "candidate": c.name,
                "usd_per_hour": c.price.usd_per_hour,
                "replicas": c.price.replicas,
                "usd_per_million_input_tokens": c.price.usd_per_million_input_tokens,
                "usd_per_million_output_tokens": c.price.usd_per_million_output_tokens,
            }
            for c in spec.candidates
        ],
        schema=pa.schema(
            [
                ("candidate", pa.string()),
                ("usd_per_hour", pa.float64()),
                ("replicas", pa.int64()),
                ("usd_per_million_input_tokens", pa.float64()),
                ("usd_per_million_output_tokens", pa.float64()),
            ]
        ),
    )


def accuracy_view(accuracy_summary: pa.Table | None) -> pa.Table:
    """(candidate, accuracy) from the accuracy summary; no rows when the task is not scored."""
    if accuracy_summary is None or accuracy_summary.num_rows == 0:
        return ACCURACY_VIEW_SCHEMA.empty_table()
    return accuracy_summary.select(["candidate", "accuracy"]).cast(ACCURACY_VIEW_SCHEMA)


def _cost(session: QuerySession, spec: Spec, accuracy_summary: pa.Table | None) -> pa.Table:
    session.bind("prices", prices_table(spec))
    session.bind("accuracy_by_candidate", accuracy_view(accuracy_summary))
    table = session.run("cost_per_decision")
    return with_cost_interval(table, accuracy_summary, session.params["z"])


def cost_per_decision(raw_timings: Path | pa.Table, spec: Spec, accuracy_summary: pa.Table | None = None) -> pa.Table:
    with _session(raw_timings, spec) as session:
        return _cost(session, spec, accuracy_summary)


def with_cost_interval(cost: pa.Table, accuracy_summary: pa.Table | None, z: float) -> pa.Table:
    """An interval for cost per decision from the uncertainty of the useful share.

    The window's cost is taken as known; the share of requests that met the SLA has a Wilson
    interval and, when scored, so has accuracy. Their extreme products bound the useful
    decisions, and cost ÷ those bounds the cost per decision (a conservative interval).
    """
    accuracy = {}
    if accuracy_summary is not None:
        for row in accuracy_summary.to_pylist():
            accuracy[row["candidate"]] = (row["accuracy_ci_low"], row["accuracy_ci_high"])
    lows, highs = [], []
    for row in cost.to_pylist():
        n, within = row["requests_in_window"], row["decisions_within_sla"]
        share_low, share_high = wilson_interval(within, n, z)
        acc_low, acc_high = accuracy.get(row["candidate"], (1.0, 1.0))
        if share_low is None or acc_low is None or row["cost_usd"] is None:
            lows.append(None)
            highs.append(None)
            continue
        most, least = n * share_high * acc_high, n * share_low * acc_low
        lows.append(row["cost_usd"] / most if most > 0 else None)
        highs.append(row["cost_usd"] / least if least > 0 else None)
    cost = cost.append_column("cost_per_decision_usd_ci_low", pa.array(lows, pa.float64()))
    return cost.append_column("cost_per_decision_usd_ci_high", pa.array(highs, pa.float64()))


# --- accuracy --------------------------------------------------------------------------------


def accuracy_summary(accuracy_results: Path | pa.Table, spec: Spec) -> pa.Table:
    """Accuracy per candidate with its Wilson interval and the delta to the published accuracy."""
    params = {"claimed_accuracy": spec.claim.figures.get("accuracy"), "z": z_value(spec.analysis.confidence)}
    with QuerySession({"accuracy_results": accuracy_results}, params) as session:
        table = with_wilson(session.run("accuracy_summary"), "correct", "scored", "accuracy", params["z"])
    claimed = params["claimed_accuracy"]
    for end in ("low", "high"):  # the delta's interval is the accuracy's, shifted by the claim
        bounds = table.column(f"accuracy_ci_{end}").to_pylist()
        shifted = [None if b is None or claimed is None else b - claimed for b in bounds]
        table = table.append_column(f"accuracy_delta_ci_{end}", pa.array(shifted, pa.float64()))
    return table


def accuracy_by_label(accuracy_results: Path | pa.Table, spec: Spec) -> pa.Table:
    """The confusion matrix in long form, with each label's accuracy and Wilson interval."""
    z = z_value(spec.analysis.confidence)
    with QuerySession({"accuracy_results": accuracy_results}) as session:
        table = session.run("accuracy_by_label")
    return with_wilson(table, "label_correct", "label_items", "label_accuracy", z)


# --- everything at once (benchmarks, `loadproof verify`) ---------------------------------------


def analyse_all(raw_timings: Path | pa.Table, spec: Spec, accuracy_summary: pa.Table | None = None) -> dict[str, pa.Table]:
    """Every table from one session: the shared steps are staged once."""
    with _session(raw_timings, spec) as session:
        tables = {"throughput": _throughput(session)}
        tables["throughput_buckets"] = session.run("throughput_buckets")
        tables["error_breakdown"] = with_wilson(
            session.run("error_breakdown"), "requests", "requests_planned", "rate", session.params["z"]
        )
        tables["cost_per_decision"] = _cost(session, spec, accuracy_summary)
        tables["latency_percentiles"] = _latency(session, spec)
        return tables
