"""What a figure is, asked by name: its unit and direction, its percentile, what a claim on it is
about. Every answer is read from the metric catalogue (`pipeline/analysis/declare/catalogue.py`, the one
declaration of every figure); this module only keeps the questions the stages ask short."""

from pipeline.analysis.declare.catalogue import (  # noqa: F401  (re-exported: the stages import them from here)
    BASES,
    BY_NAME,
    CAPACITY_AT_SLA,
    FROM_SCHEDULE,
    LATENCY_METRICS,
    PERCENTILES,
    PRODUCTION_LOAD,
    TOLERANCES,
    VENDOR_CONDITIONS,
    ToleranceDefault,
    canonical_name,
    latency_figure_name,
    metric,
    names,
)

# the throughput figures: a claim on one is about capacity (judged at the capacity at the SLA and at
# the vendor's conditions, never at the production load, where it is served demand)
CAPACITY_FIGURES = names(kind="rate")

CLAIM_KINDS = {
    "rate": "capacity",
    "quality": "quality",
    "cost": "cost",
    "latency percentile": "latency at load",
    "proportion": "latency at load",
    "per request": "latency at load",  # what the replies held (reasoning tokens): judged at the production load
    "sizing": "capacity",  # what the capacity at the SLA means for a deployment (pipeline/analysis/sizing/replicas.py)
}


def describe(name: str) -> tuple[str, bool]:
    """Unit and direction (True when larger is better) of a figure; KeyError names the figure."""
    entry = metric(name)
    return entry.unit, entry.larger_is_better


def percentile_of(name: str) -> float | None:
    """The quantile a latency figure names (ttft_ms_p99 → 0.99); None for other figures."""
    return BY_NAME[name].percentile if name in BY_NAME else None


def claim_kind(name: str) -> str:
    """What a figure is about: capacity (throughput), latency at load (percentiles, SLA
    attainment, error rate: judged at the production load), quality (accuracy, on the slice) or
    cost."""
    return CLAIM_KINDS[metric(name).kind]


def known_names() -> tuple[str, ...]:
    return names()


def tolerance_default(name: str) -> ToleranceDefault:
    """The default tolerance of a claim on a figure (by its kind), with its key and source."""
    return metric(name).tolerance


def tolerance_setting(name: str) -> str:
    """The spec setting that sets a figure's tolerance: `claim.tolerance.throughput`."""
    return f"claim.tolerance.{tolerance_default(name).key}"
