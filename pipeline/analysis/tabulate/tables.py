"""Raw timings → decision tables, each computed by DuckDB queries in sql/.

Every table starts from `steady_requests` (the raw timings marked with the steady-state window,
prompt-length bucket and SLA bounds). Percentile ranks are exact binomial order statistics
(`pipeline.analysis.statistics.stats.order_statistic_ranks`) computed here between two queries; proportions get
Wilson intervals from `pipeline.analysis.statistics.stats.wilson_interval`.

ITL is read from `itl_histogram` (sql/itl_histogram.sql): every gap counted per whole
microsecond, written beside raw_timings by the replay, so the 10^9 gap lists of a long run are
decoded once, not by every analysis. Without a usable histogram (none given, or one built with
another window or other buckets) it is built here from the raw timings, with the same SQL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from scipy.stats import norm

from pipeline.analysis.statistics import dependence, steady_state
from pipeline.analysis.statistics.intervals import (
    RANK_SPAN_MARGIN,
    dependence_aware_ranks,
    inverted_low_ranks,
    points_at,
    rank_spans,
    ranks_table,
    spans_hold,
    with_interval_methods,
    with_wilson,
)
from pipeline.analysis.statistics.stats import peak_concurrency, wilson_interval
from pipeline.analysis.tabulate import bill_check
from pipeline.analysis.tabulate.reply_mix import with_reply_mix
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.duck.connect import ANALYSIS_MEMORY_LIMIT
from pipeline.duck.session import QuerySession
from pipeline.spec import Spec

# the analysis parameters an ITL histogram was built with, kept in its Parquet schema metadata
ITL_HISTOGRAM_PARAMS_KEY = b"loadproof.itl_histogram.params"

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
        "interval_batches": spec.analysis.interval_batches,
        "steady_bins": steady_state.STEADY_BINS,
        "dependence_aware": spec.analysis.intervals == "dependence_aware",
        # Student's t for the batch-means intervals (batches − 1 degrees of freedom)
        "t_batches": dependence.t_quantile(spec.analysis.interval_batches, spec.analysis.confidence),
    }


def steady_session(raw_timings: Path | pa.Table, spec: Spec, queries: QueryCatalog = REPO_QUERIES) -> QuerySession:
    """A session over the raw timings with the spec's analysis parameters and `steady_requests` staged
    over the window the steady-state tests kept (`pipeline.analysis.statistics.steady_state`)."""
    session = QuerySession(
        {"raw_timings": raw_timings}, analysis_params(spec), queries, memory_limit=ANALYSIS_MEMORY_LIMIT
    )
    steady_state.bind_detected(session)
    session.stage("steady_requests")
    return bill_check.bind_bill_basis(session, spec)  # the bill check's counter and prices


# --- latency ---------------------------------------------------------------------------------


# how the steady-state window counts a request: by its send time, in the window the steady-state tests
# kept. A histogram built with another membership (ending inside too; the window assumed) records
# another value or none, so it is rebuilt rather than read with the old window.
STEADY_WINDOW_MEMBERSHIP = "sent_inside_detected"
# passes that move each percentile's low end down by the test inverted at it (intervals.inverted_low_ranks):
# each reads the batches' counts at the current low end (at 10 M rows: 92, 32, 13, 7 of 200 ends moved)
LOW_END_PASSES = 4


def itl_histogram_params(spec: Spec) -> dict:
    """What an ITL histogram depends on besides the raw timings: the window (its bounds and how
    it counts a request), the buckets and the send-time batches."""
    params = analysis_params(spec)
    return {
        **{key: params[key] for key in ("warmup_s", "cooldown_s", "bucket_edges", "interval_batches")},
        "steady_window": STEADY_WINDOW_MEMBERSHIP,
    }


def _with_params(table: pa.Table, spec: Spec) -> pa.Table:
    metadata = dict(table.schema.metadata or {})
    metadata[ITL_HISTOGRAM_PARAMS_KEY] = json.dumps(itl_histogram_params(spec), sort_keys=True).encode()
    return table.replace_schema_metadata(metadata)


def itl_histogram(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    """Every inter-chunk gap counted per candidate, load level, steady-state flag, prompt-length
    bucket and whole microsecond; the spec's window and buckets recorded in its metadata."""
    with steady_session(raw_timings, spec) as session:
        session.stage("steady_windows")
        return _with_params(session.run("itl_histogram"), spec)


def itl_histogram_usable(histogram: Path | pa.Table | None, spec: Spec) -> bool:
    """A histogram can stand in for the gap lists when it exists and was built with this spec's
    window and buckets (else the figures would silently use another window)."""
    if histogram is None:
        return False
    if isinstance(histogram, pa.Table):
        metadata = histogram.schema.metadata
    elif Path(histogram).is_file():
        metadata = pq.read_schema(histogram).metadata
    else:
        return False
    recorded = (metadata or {}).get(ITL_HISTOGRAM_PARAMS_KEY)
    return recorded is not None and json.loads(recorded) == itl_histogram_params(spec)


def _bind_itl_histogram(session: QuerySession, spec: Spec, histogram: Path | pa.Table | None) -> None:
    """The given histogram when usable, else one built from the raw timings in this session."""
    if itl_histogram_usable(histogram, spec):
        session.bind("itl_histogram", histogram)
    else:
        session.stage("steady_windows")
        session.stage("itl_histogram")


def _stage_bin_values(session: QuerySession, spans: pa.Table, replace: bool = False) -> None:
    session.bind("rank_spans", spans)
    session.stage("latency_bin_values", replace=replace)


def _latency(session: QuerySession, spec: Spec, histogram: Path | pa.Table | None = None) -> pa.Table:
    _bind_itl_histogram(session, spec, histogram)
    # the values one per row, never held: the bins are defined there, and a pack's older copies of the
    # latency queries read it (the repository's read each metric's column of steady_requests)
    session.define_view("latency_samples")
    aware = spec.analysis.intervals == "dependence_aware"
    queries = session.queries
    # the values per batch and bin, staged once for the two queries that read them (a pack's own
    # older copy of latency_histogram reads the samples directly)
    if queries.reads("latency_histogram", "latency_batch_bins") or (
        aware and queries.reads("latency_batch_counts", "latency_batch_bins")
    ):
        session.stage("latency_batch_bins")
    session.stage("latency_histogram")
    counts = session.run("latency_counts")
    exact = ranks_table(counts, spec.analysis.confidence)
    session.bind("ranks", exact)
    # the values of every bin an order statistic may be read from, gathered in one pass for both
    # passes of latency_percentiles and for latency_batch_counts (a pack's older copies read the
    # samples themselves)
    gathered = queries.reads("latency_percentiles", "latency_bin_values") or (
        aware and queries.reads("latency_batch_counts", "latency_bin_values")
    )
    spans = rank_spans(exact, RANK_SPAN_MARGIN if aware else 0)
    if gathered:
        _stage_bin_values(session, spans)
    table = session.run("latency_percentiles")
    if not aware:
        return table
    # the point estimates found, the batches' counts at each of them widen the ranks; a second
    # pass reads the (possibly) new order statistics
    scope_orders = {(r["candidate"], r["metric"], r["scope"]): r["scope_order"] for r in counts.to_pylist()}
    session.bind("points", points_at(table, "value", scope_orders))
    batches, t = spec.analysis.interval_batches, session.params["t_batches"]
    ranks = dependence_aware_ranks(exact, session.run("latency_batch_counts"), batches, t)
    # each low end then moved down where the test inverted at it reaches further (a pack's older copy
    # of latency_batch_counts, written before, kept Woodruff's low end); only the percentiles the last
    # pass moved can move again
    passes = LOW_END_PASSES if queries.reads("latency_batch_counts", "low_ends") else 0
    moving = None
    for low_end_pass in range(passes + 1):
        if gathered and not spans_hold(spans, ranks):  # widened past the margin: gather those bins
            spans = rank_spans(ranks, 0)
            _stage_bin_values(session, spans, replace=True)
        session.bind("ranks", ranks)
        table = session.run("latency_percentiles")
        if low_end_pass == passes:
            break
        session.bind("points", points_at(table, "ci_low", scope_orders, moving))
        moved = inverted_low_ranks(ranks, session.run("latency_batch_counts"), batches, t)
        if moved is None:
            break
        ranks, moving = moved
    return table


def latency_percentiles(
    raw_timings: Path | pa.Table, spec: Spec, itl_histogram: Path | pa.Table | None = None
) -> pa.Table:
    """TTFT, TPOT, ITL, E2E at p50…p99.9 per candidate and scope, with n and exact intervals
    (ITL exact to 1 µs, from `itl_histogram` when usable, else built from the raw timings)."""
    with steady_session(raw_timings, spec) as session:
        return _latency(session, spec, itl_histogram)


# --- throughput, SLA, errors -------------------------------------------------------------------


def throughput_buckets(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    with steady_session(raw_timings, spec) as session:
        return session.run("throughput_buckets")


def _throughput(session: QuerySession, replies: bool = True) -> pa.Table:
    """`replies`: with what the replies held and were billed (the reply mix and the bill check)."""
    session.stage("throughput_buckets")
    table = session.run("throughput")
    peaks = []
    for candidate in table.column("candidate").to_pylist():
        session.params["candidate"] = candidate
        events = session.run("concurrency_events")
        peaks.append(peak_concurrency(events.column("t_sent_ns").to_numpy(), events.column("t_end_ns").to_numpy()))
    table = table.append_column("peak_concurrency", pa.array(peaks, pa.int64()))
    table = with_wilson(table, "requests_good", "requests_in_window", "sla_attainment", session.params["z"])
    table = with_wilson(table, "requests_failed", "requests_planned", "error_rate", session.params["z"])
    if replies:
        table = bill_check.with_bill_check(session, with_reply_mix(session, table))
    return steady_state.with_steady_state(session, with_interval_methods(table, session.params))


def throughput(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    """Rates with batch-means intervals, SLA attainment (Wilson), peak and mean concurrency."""
    with steady_session(raw_timings, spec) as session:
        return _throughput(session)


def steady_requests(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    """The raw timings marked with the steady-state window, prompt-length bucket and SLA bounds, as
    every figure reads them (the pack's latency charts draw these rows)."""
    with steady_session(raw_timings, spec) as session:
        return session.staged("steady_requests")


def prefix_cache_hits(raw_timings: Path | pa.Table, spec: Spec, queries: QueryCatalog = REPO_QUERIES) -> pa.Table:
    """Per candidate, the prefix-cache hit rate its server reported over the steady window's
    successful requests (NULL where it reported no `cached_tokens`)."""
    with steady_session(raw_timings, spec, queries) as session:
        return session.run("prefix_cache_hits")


def error_breakdown(raw_timings: Path | pa.Table, spec: Spec) -> pa.Table:
    """Every planned request by outcome (ok or error type), rate with a Wilson interval."""
    with steady_session(raw_timings, spec) as session:
        table = session.run("error_breakdown")
        return with_wilson(table, "requests", "requests_planned", "rate", session.params["z"])


# --- cost ------------------------------------------------------------------------------------


PRICES_SCHEMA = pa.schema(
    [("candidate", pa.string()), ("usd_per_hour", pa.float64()), ("replicas", pa.int64())]
    + [(f"usd_per_million_{kind}_tokens", pa.float64()) for kind in ("input", "output")]
)


def prices_table(spec: Spec) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {"candidate": c.name, **c.price.model_dump(include={"usd_per_hour", "replicas"})}
            | {
                f"usd_per_million_{k}_tokens": getattr(c.price, f"usd_per_million_{k}_tokens")
                for k in ("input", "output")
            }
            for c in spec.candidates
        ],
        schema=PRICES_SCHEMA,
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
    with steady_session(raw_timings, spec) as session:
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
    lows: list[float | None] = []
    highs: list[float | None] = []
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


def accuracy_summary(accuracy_results: Path | pa.Table, spec: Spec, queries: QueryCatalog = REPO_QUERIES) -> pa.Table:
    """Accuracy per candidate with its Wilson interval and the delta to the published accuracy."""
    z = z_value(spec.analysis.confidence)
    params = {"claimed_accuracy": spec.claim.figures.get("accuracy"), "z": z}
    with QuerySession({"accuracy_results": accuracy_results}, params, queries) as session:
        table = with_wilson(session.run("accuracy_summary"), "correct", "scored", "accuracy", z)
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


def analyse_all(
    raw_timings: Path | pa.Table,
    spec: Spec,
    accuracy_summary: pa.Table | None = None,
    itl_histogram: Path | pa.Table | None = None,
    queries: QueryCatalog = REPO_QUERIES,
    load_figures_only: bool = False,
) -> dict[str, pa.Table]:
    """Every table from one session: the shared steps are staged once. Without a usable
    `itl_histogram` it is built from the raw timings and returned too (`loadproof verify`).
    `load_figures_only`: what a sweep level and an arm read, by the same queries (throughput,
    latency, cost); not the reply mix, bill check and error breakdown, which only the headline
    reports (the catalogue's vendor-conditions sources and sql/sweep_levels.sql read none of them)."""
    with steady_session(raw_timings, spec, queries) as session:
        return analysed(session, spec, accuracy_summary, itl_histogram, load_figures_only)


def analysed(
    session: QuerySession,
    spec: Spec,
    accuracy_summary: pa.Table | None = None,
    itl_histogram: Path | pa.Table | None = None,
    load_figures_only: bool = False,
) -> dict[str, pa.Table]:
    """`analyse_all`'s tables from a `steady_session` already open (a sweep level's reads more from it)."""
    tables = {"throughput": _throughput(session, replies=not load_figures_only)}
    buckets = session.staged("throughput_buckets")  # staged by _throughput: not run twice
    tables["throughput_buckets"] = buckets.sort_by([("candidate", "ascending"), ("second", "ascending")])
    if not load_figures_only:
        tables["error_breakdown"] = with_wilson(
            session.run("error_breakdown"), "requests", "requests_planned", "rate", session.params["z"]
        )
    tables["cost_per_decision"] = _cost(session, spec, accuracy_summary)
    tables["latency_percentiles"] = _latency(session, spec, itl_histogram)
    if not itl_histogram_usable(itl_histogram, spec):
        tables["itl_histogram"] = _with_params(session.staged("itl_histogram"), spec)
    return tables
