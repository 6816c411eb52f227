"""The catalogue of figure names used in specs and in the evidence pack (ARCHITECTURE.md, "Metric definitions").

Percentile suffixes drop the decimal point: p99.9 is `p999` (so `ttft_ms_p999`).
"""

import re

PERCENTILES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99, "p999": 0.999}
LATENCY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "ttft_from_schedule_ms", "e2e_from_schedule_ms")
# TTFT and E2E timed from the planned send instead of the actual one: when the client lagged,
# these carry the verdicts (a late send would otherwise hide the wait; pipeline/pack/claims.py)
FROM_SCHEDULE = {"ttft_ms": "ttft_from_schedule_ms", "e2e_ms": "e2e_from_schedule_ms"}

# name -> (unit, larger_is_better)
RATE_FIGURES: dict[str, tuple[str, bool]] = {
    "output_tokens_per_s": ("tokens/s", True),
    "total_tokens_per_s": ("tokens/s", True),
    "requests_per_s": ("requests/s", True),
    "goodput_requests_per_s": ("requests/s", True),
    "sla_attainment": ("fraction", True),
    "error_rate": ("fraction", False),
    "accuracy": ("fraction", True),
    "cost_per_decision_usd": ("USD", False),
    "cost_per_million_output_tokens_usd": ("USD", False),
    "cost_per_decision_at_max_sla_load_usd": ("USD", False),
}

# Where a claimed figure is judged (its `basis`). Throughput at an offered load can never exceed
# that load, so a capacity claim is judged at the buyer's capacity at the SLA (the highest load
# the sweep found still meeting it) and at the vendor's own conditions, never against the
# throughput the production load happened to offer (that is shown as served demand).
PRODUCTION_LOAD = "production_load"
CAPACITY_AT_SLA = "capacity_at_sla"
VENDOR_CONDITIONS = "vendor_conditions"
BASES = (PRODUCTION_LOAD, CAPACITY_AT_SLA, VENDOR_CONDITIONS)
CAPACITY_FIGURES = ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput_requests_per_s")

_LATENCY_NAME = re.compile(r"^(?P<metric>" + "|".join(LATENCY_METRICS) + r")_(?P<pct>" + "|".join(PERCENTILES) + r")$")


def latency_figure_name(metric: str, percentile: str) -> str:
    return f"{metric}_{percentile}"


def describe(name: str) -> tuple[str, bool]:
    """Unit and direction (True when larger is better) of a figure; KeyError names the figure."""
    if _LATENCY_NAME.match(name):
        return "ms", False
    if name in RATE_FIGURES:
        return RATE_FIGURES[name]
    raise KeyError(name)


def percentile_of(name: str) -> float | None:
    """The quantile a latency figure names (ttft_ms_p99 → 0.99); None for other figures."""
    match = _LATENCY_NAME.match(name)
    return PERCENTILES[match.group("pct")] if match else None


def claim_kind(name: str) -> str:
    """What a figure is about: capacity (throughput), latency at load (percentiles, SLA
    attainment, error rate: judged at the production load), quality (accuracy, on the slice) or
    cost."""
    if name in CAPACITY_FIGURES:
        return "capacity"
    if name == "accuracy":
        return "quality"
    if name.startswith("cost_"):
        return "cost"
    return "latency at load"


def known_names() -> list[str]:
    latency = [latency_figure_name(m, p) for m in LATENCY_METRICS for p in PERCENTILES]
    return latency + list(RATE_FIGURES)
