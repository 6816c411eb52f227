"""Interval columns of the analysis tables: the exact order-statistic ranks of every percentile,
those ranks widened where the run's send-time batches show dependence, Wilson intervals of
proportions, and each interval's method named (the arithmetic: `stats.py`, `dependence.py`)."""

from __future__ import annotations

import pyarrow as pa

from pipeline.analysis.declare.metrics import PERCENTILES
from pipeline.analysis.statistics import dependence
from pipeline.analysis.statistics.stats import OrderStatisticRanks, order_statistic_ranks, wilson_interval

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
        ("interval_method", pa.string()),
        ("design_effect", pa.float64()),
    ]
)
RANK_SPANS_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("metric", pa.string()),
        ("scope", pa.string()),
        ("q", pa.float64()),
        ("first_rank", pa.int64()),
        ("last_rank", pa.int64()),
    ]
)
# How far past its exact interval a percentile's values are gathered (sql/latency_bin_values.sql),
# in exact half-widths on each side: the batch-means interval is about t/z · √(design effect) times
# the exact one (1.42 · √D at 5 batches), so 3 more hold it up to D ≈ 8 with one pass over the
# values; a wider one has its bins gathered again (the figures are the same either way).
RANK_SPAN_MARGIN = 3
POINTS_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("metric", pa.string()),
        ("scope", pa.string()),
        ("q", pa.float64()),
        ("value", pa.float64()),
        ("scope_order", pa.int64()),
    ]
)


def ranks_table(counts: pa.Table, confidence: float) -> pa.Table:
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
                    "sample_every": 1,  # every value counts (ITL too, to 1 µs); kept for older readers
                    "interval_method": dependence.EXACT,
                    "design_effect": None,
                }
            )
    return pa.Table.from_pylist(rows, schema=RANKS_SCHEMA)


# what names one percentile in the rank, span, count and points tables
PERCENTILE_KEY = ("candidate", "metric", "scope", "q")


def percentile_key(row: dict) -> tuple:
    """A row's percentile: its (candidate, metric, scope, q)."""
    return tuple(row[name] for name in PERCENTILE_KEY)


def rank_spans(ranks: pa.Table, margin: int) -> pa.Table:
    """Per percentile, the ranks its point and interval may take: the exact interval (an open end
    at the point) widened by `margin` times each half-width, within 1 … n."""
    rows = []
    for row in ranks.to_pylist():
        point = row["point_rank"]
        if point is None:
            continue
        low = point if row["low_rank"] is None else row["low_rank"]
        high = point if row["high_rank"] is None else row["high_rank"]
        rows.append(
            {
                **{key: row[key] for key in PERCENTILE_KEY},
                "first_rank": max(1, low - margin * (point - low)),
                "last_rank": min(row["n"], high + margin * (high - point)),
            }
        )
    return pa.Table.from_pylist(rows, schema=RANK_SPANS_SCHEMA)


def spans_hold(spans: pa.Table, ranks: pa.Table) -> bool:
    """Whether every rank of `ranks` (point and interval ends) lies in its percentile's span."""
    bounds = {percentile_key(r): (r["first_rank"], r["last_rank"]) for r in spans.to_pylist()}
    for row in ranks.to_pylist():
        wanted = [row[key] for key in ("point_rank", "low_rank", "high_rank") if row[key] is not None]
        if not wanted:
            continue
        first, last = bounds.get(percentile_key(row), (None, None))
        if first is None or min(wanted) < first or max(wanted) > last:
            return False
    return True


def counts_by_percentile(batch_counts: pa.Table) -> dict[tuple, tuple[list[int], list[int]]]:
    """latency_batch_counts' rows as (below, total) lists of the batches, per candidate, metric,
    scope and q: what `dependence.ratio_standard_error` takes."""
    counts: dict[tuple, tuple[list[int], list[int]]] = {}
    for row in batch_counts.to_pylist():
        below, total = counts.setdefault(percentile_key(row), ([], []))
        below.append(row["below"])
        total.append(row["total"])
    return counts


def dependence_aware_ranks(exact: pa.Table, batch_counts: pa.Table, batches: int, t: float | None) -> pa.Table:
    """The exact ranks, each end widened to the batch-means (Woodruff) rank where that is wider
    (pipeline/analysis/statistics/dependence.py); the method that set the ends and the design effect kept."""
    counts = counts_by_percentile(batch_counts)
    rows = exact.to_pylist()
    for row in rows:
        found = counts.get(percentile_key(row))
        estimate = None if found is None else dependence.ratio_standard_error(*found, batches)
        if estimate is None or t is None:
            continue
        share, standard_error = estimate
        row["design_effect"] = dependence.design_effect(share, standard_error, row["n"])
        low, high = dependence.woodruff_ranks(row["n"], row["q"], standard_error, t)
        exact_ranks = OrderStatisticRanks(row["point_rank"], row["low_rank"], row["high_rank"])
        row["low_rank"], row["high_rank"], widened = dependence.wider_ranks(exact_ranks, low, high)
        if widened:
            row["interval_method"] = dependence.batch_means_label(batches)
    return pa.Table.from_pylist(rows, schema=RANKS_SCHEMA)


def points_at(table: pa.Table, column: str, scope_orders: dict, only: set[tuple] | None = None) -> pa.Table:
    """The `points` view latency_batch_counts counts each batch's values at: each percentile's
    `column` (its point estimate, or its interval's low end) as the value; `only` these
    percentiles (candidate, metric, scope, q) when given."""
    points = [
        {**{key: row[key] for key in PERCENTILE_KEY}, "value": row[column], "scope_order": order}
        for row in table.to_pylist()
        if row[column] is not None and (only is None or percentile_key(row) in only)
        for order in [scope_orders[(row["candidate"], row["metric"], row["scope"])]]
    ]
    return pa.Table.from_pylist(points, schema=POINTS_SCHEMA)


def inverted_low_ranks(
    ranks: pa.Table, low_counts: pa.Table, batches: int, t: float | None
) -> tuple[pa.Table, set[tuple]] | None:
    """`ranks` with each low end moved down to where the test inverted at it reaches
    (`dependence.inverted_low_rank`, from `low_counts`: each batch's values at or below the
    current low end), and the percentiles (candidate, metric, scope, q) whose end moved; None
    when none did (a lower end only: the wider always wins)."""
    counts = counts_by_percentile(low_counts)
    rows, moved = ranks.to_pylist(), set()
    for row in rows:
        key = percentile_key(row)
        found = counts.get(key)
        estimate = (
            None if found is None or row["low_rank"] is None else dependence.ratio_standard_error(*found, batches)
        )
        if estimate is None or t is None:
            continue
        low = dependence.inverted_low_rank(row["n"], row["q"], estimate[1], t)
        if low is None or low < row["low_rank"]:
            row["low_rank"] = low
            row["interval_method"] = dependence.batch_means_label(batches, low_end_inverted=True)
            moved.add(key)
    return (pa.Table.from_pylist(rows, schema=RANKS_SCHEMA), moved) if moved else None


def with_candidate_columns(table: pa.Table, per_candidate: pa.Table, names: tuple[str, ...]) -> pa.Table:
    """Append `names` from `per_candidate` (one row per candidate) to each of `table`'s rows by its
    candidate; NULL for a candidate `per_candidate` has no row for."""
    rows = {row["candidate"]: row for row in per_candidate.to_pylist()}
    candidates = table.column("candidate").to_pylist()
    for name in names:
        values = [rows.get(c, {}).get(name) for c in candidates]
        table = table.append_column(name, pa.array(values, per_candidate.schema.field(name).type))
    return table


def with_wilson(table: pa.Table, successes: str, n: str, name: str, z: float) -> pa.Table:
    """Append `{name}_ci_low` and `{name}_ci_high`: the Wilson interval of successes / n."""
    bounds = [
        wilson_interval(k or 0, m or 0, z)
        for k, m in zip(table.column(successes).to_pylist(), table.column(n).to_pylist())
    ]
    table = table.append_column(f"{name}_ci_low", pa.array([b[0] for b in bounds], pa.float64()))
    return table.append_column(f"{name}_ci_high", pa.array([b[1] for b in bounds], pa.float64()))


def with_interval_methods(table: pa.Table, params: dict) -> pa.Table:
    """Name each rate's and the attainment's interval method, and (dependence-aware) widen the
    attainment's Wilson interval to its batch-means one where that is wider. A throughput table
    from an older query (no batch-means columns: a pack written before) keeps its intervals."""
    batches = params["interval_batches"]
    if "sla_attainment_batch_ci_low" not in table.schema.names:
        return table
    methods, lows, highs = [], [], []
    for row in table.to_pylist():
        low, high, widened = row["sla_attainment_ci_low"], row["sla_attainment_ci_high"], False
        if params["dependence_aware"]:
            batch = (row["sla_attainment_batch_ci_low"], row["sla_attainment_batch_ci_high"])
            low, high, widened = dependence.wider_interval((low, high), batch)
        methods.append(dependence.batch_means_label(batches) if widened else dependence.WILSON)
        lows.append(low)
        highs.append(high)
    table = table.set_column(
        table.schema.get_field_index("sla_attainment_ci_low"), "sla_attainment_ci_low", pa.array(lows, pa.float64())
    )
    table = table.set_column(
        table.schema.get_field_index("sla_attainment_ci_high"), "sla_attainment_ci_high", pa.array(highs, pa.float64())
    )
    table = table.append_column("sla_attainment_interval_method", pa.array(methods, pa.string()))
    rate_method = dependence.batch_means_label(batches)
    table = table.append_column("rate_interval_method", pa.array([rate_method] * table.num_rows, pa.string()))
    # the error rate is over every planned request: Wilson's (appended by the analysis)
    return table.append_column(
        "error_rate_interval_method", pa.array([dependence.WILSON] * table.num_rows, pa.string())
    )
