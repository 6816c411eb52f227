"""What a catalogue entry is (`pipeline/analysis/declare/catalogue.py` holds the entries): a figure's
kind, the bases it may be judged at, where analysis reads it (`Source`) and the entry itself
(`Metric`), with the interval methods' words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["latency percentile", "rate", "proportion", "per request", "cost", "quality", "sizing"]

# Where a claimed figure is judged (its `basis`). Throughput at an offered load can never exceed
# that load, so a capacity claim is judged at the buyer's capacity at the SLA (the highest load
# the sweep found still meeting it) and at the vendor's own conditions, never against the
# throughput the production load happened to offer (that is shown as served demand).
PRODUCTION_LOAD = "production_load"
CAPACITY_AT_SLA = "capacity_at_sla"
VENDOR_CONDITIONS = "vendor_conditions"
BASES = (PRODUCTION_LOAD, CAPACITY_AT_SLA, VENDOR_CONDITIONS)

PERCENTILES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99, "p999": 0.999}

# interval methods, in words (the per-row method a table names is more precise: `Source.method`)
ORDER_STATISTIC = "exact binomial order statistic, widened to batch means where the send-time batches show dependence"
BATCH_MEANS = "batch means over analysis.interval_batches spans of send time, Student's t"
WILSON_OR_BATCH = "the wider of Wilson's and the batch-means ratio interval"
WILSON_SCORE = "Wilson score"
USEFUL_SHARE = "the window's cost over the extreme products of the SLA share's and the accuracy's Wilson bounds"
NO_INTERVAL = "none (a claim on it stays inconclusive)"
BRACKET = "the capacity bracket: from the level met to the first level missed (open where none missed)"


# How far a measured figure may fall short of its claim and still *hold within tolerance*
# (`pipeline.analysis.statistics.stats.verdict`): one default per figure kind, each with where it comes from.
# A spec sets its own under `claim.tolerance.<key>` (pipeline/spec/claim.py). A fraction t of the
# claim C: a higher-is-better figure holds within tolerance down to C·(1 − t), a lower-is-better
# one up to C·(1 + t).
@dataclass(frozen=True)
class ToleranceDefault:
    key: str  # the spec's `claim.tolerance.<key>`
    fraction: float
    source: str  # why this default, with its reference


THROUGHPUT_TOLERANCE = ToleranceDefault(
    "throughput",
    0.10,
    "independent reproductions of published throughput land 6–14 % below it "
    "(anyscale/llm-continuous-batching-benchmarks#4); 10 % is the middle of that range",
)
TOLERANCES: dict[Kind, ToleranceDefault] = {
    "rate": THROUGHPUT_TOLERANCE,
    "latency percentile": ToleranceDefault(
        "latency",
        0.10,
        "the throughput default seen from the other side: at a given number of requests in flight, latency is "
        "in flight ÷ throughput (Little's law), so a reproduction 10 % short on throughput is about 10 % long on "
        "latency",
    ),
    "quality": ToleranceDefault(
        "accuracy",
        0.01,
        "MLPerf Inference accepts a submission whose accuracy is at least 99 % of the reference model's (1 %)",
    ),
    "cost": ToleranceDefault(
        "cost",
        0.10,
        "a cost per decision or per token is a price over the throughput that delivered it, so it takes the "
        "throughput default (10 %)",
    ),
    "proportion": ToleranceDefault(
        "proportion",
        0.0,
        "no published reproduction range for SLA attainment, an error rate or a share: judged against the claim itself",
    ),
    "per request": ToleranceDefault(
        "per_request",
        0.0,
        "no published reproduction range for what a reply holds (reasoning tokens): judged against the claim itself",
    ),
    "sizing": ToleranceDefault(
        "sizing",
        0.0,
        "no published reproduction range for a fraction of the buyer's load or a replica count: judged against "
        "the claim itself",
    ),
}


@dataclass(frozen=True)
class Source:
    """Where analysis reads a figure: one row of `table` per candidate (a latency table: the row
    whose `metric` and `percentile` match, over the whole window) and these columns of it."""

    table: str  # an analysis table (its rows: analysis's, `pipeline/analysis/judge/figures.py`)
    value: str
    ci_low: str | None  # None: the figure has no interval
    ci_high: str | None
    n: str  # what the figure counts (requests, items, gaps)
    method: str | None = None  # the column naming the row's own interval method, where the table names one
    # a latency table's row is picked by these (metric family, percentile); None for one-row-per-candidate tables
    row_metric: str | None = None
    row_percentile: str | None = None
    query: str | None = None  # the sql/ query that computes the table, when not of the same name

    @property
    def sql(self) -> str:
        return self.query or self.table


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    larger_is_better: bool
    kind: Kind
    sources: dict[str, Source]  # basis -> where analysis reads the figure at that basis
    interval: str  # the interval method, in words
    display: str
    definition: str
    claim_names: tuple[str, ...] = ()

    @property
    def bases(self) -> tuple[str, ...]:
        return tuple(self.sources)

    @property
    def source(self) -> Source:
        """The headline source: at the production load (or the basis the figure has)."""
        return self.sources.get(PRODUCTION_LOAD) or next(iter(self.sources.values()))

    @property
    def tolerance(self) -> ToleranceDefault:
        """The default tolerance of a claim on this figure, by its kind (`claim.tolerance.<key>`)."""
        return TOLERANCES[self.kind]

    @property
    def percentile(self) -> float | None:
        """The quantile a latency figure names (ttft_ms_p99 → 0.99); None for other figures."""
        return PERCENTILES[self.source.row_percentile] if self.source.row_percentile else None


def latency_figure_name(family: str, percentile: str) -> str:
    return f"{family}_{percentile}"


def vllm_names(vllm: str | None, percentile: str) -> tuple[str, ...]:
    """`vllm bench serve`'s keys for a percentile: p99_ttft_ms, p99.9_ttft_ms, median_ttft_ms."""
    if vllm is None:
        return ()
    label = {"p999": "p99.9"}.get(percentile, percentile)
    names = (f"{label}_{vllm}_ms",)
    return names + ((f"median_{vllm}_ms",) if percentile == "p50" else ())


def headline_sources(source: Source, vendor_conditions: bool = True) -> dict[str, Source]:
    """At the production load and, where an arm measures it, at the vendor's conditions: an arm is
    analysed by the headline's own queries (pipeline/analysis/judge/arms.py), so the source is the same."""
    return {PRODUCTION_LOAD: source, **({VENDOR_CONDITIONS: source} if vendor_conditions else {})}


# the capacity at the SLA (pipeline/analysis/sizing/capacity.py: sweep_summary reshaped, one row per candidate)
def capacity_source(value: str, low: str | None, high: str | None) -> Source:
    return Source("capacity", value, low, high, "n", query="sweep_summary")
