"""What the capacity at the SLA means for sizing: the fraction of the production load one
deployment carries at the SLA, the replicas that carry all of it (and its peak), and the cost per
useful decision at that replica count. Made here once, as columns of the capacity rows
(pipeline/analysis/sizing/capacity.py), read as figures through the catalogue; the pack only shows them.

- **Capacity fraction**: the highest load level met at the SLA / the production load level (× the
  buyer's load: 0.31 = the candidate carries 31 % of it; 2 = twice it). Its interval is the
  bracket: the knee lies between the level met (the low end: the point itself, the capacity
  claimed only where the SLA was met) and the first level missed (the high end; none where no
  level missed: the capacity is a lower bound).
- **Replicas at the SLA**: ceil(1 / fraction), the deployments (each as measured: the candidate's
  price's `replicas`) that serve the production load with each at or below its capacity; for the
  peak, ceil(peak-to-mean / fraction), the peak being the sampled log's busiest arrival-rate bin
  over its mean (the prompt profile's `peak_to_mean_ratio`, `workload.profile.rate_bin_s`). The
  interval carries the fraction's through: its high end gives the fewest replicas, its low end
  (the point) the most; never below one.
- **Cost per useful decision at the replicas**: a per-hour price scales with replicas, so the cost
  per useful decision at the capacity (one deployment loaded to it) × replicas × fraction (the
  replicas share the production load, each below its capacity: the rounding up is idle time paid
  for); a per-token price does not scale with replicas: the cost per useful decision at the
  capacity as it is. The interval is the capacity's cost interval at that replica count.
"""

from __future__ import annotations

import math

HOURLY, TOKENS = "hourly", "tokens"
PRICING_WORDS = {
    HOURLY: "per-hour price: scales with replicas",
    TOKENS: "per-token price: does not scale with replicas",
}
SIZING_COLUMNS = (
    "production_level",
    "capacity_fraction",
    "capacity_fraction_ci_low",
    "capacity_fraction_ci_high",
    "replicas_at_sla",
    "replicas_at_sla_ci_low",
    "replicas_at_sla_ci_high",
    "peak_to_mean_ratio",
    "replicas_at_sla_peak",
    "replicas_at_sla_peak_ci_low",
    "replicas_at_sla_peak_ci_high",
    "pricing",
    "cost_per_decision_at_sla_replicas_usd",
    "cost_per_decision_at_sla_replicas_usd_ci_low",
    "cost_per_decision_at_sla_replicas_usd_ci_high",
)


def replicas_for(demand: float, capacity: float) -> int:
    """The fewest replicas, each carrying `capacity`, that together carry `demand` (at least one);
    a ratio a rounding error above a whole number is that number."""
    return max(1, math.ceil(demand / capacity - 1e-9))


def sizing(summary: dict, pricing: str, peak_to_mean: float | None) -> dict:
    """SIZING_COLUMNS of one candidate's sweep_summary row (sql/sweep_summary.sql); every value
    None where no level met the SLA."""
    production = summary.get("production_load_level")
    last_met, first_missed = summary.get("max_sla_load_level"), summary.get("first_missing_load_level")
    out: dict = dict.fromkeys(SIZING_COLUMNS)
    out.update(production_level=production, peak_to_mean_ratio=peak_to_mean, pricing=pricing)
    if production is None or last_met is None or production <= 0:
        return out
    fraction = last_met / production
    fraction_high = None if first_missed is None else first_missed / production
    replicas = replicas_for(1.0, fraction)
    out.update(
        capacity_fraction=fraction,
        capacity_fraction_ci_low=fraction,
        capacity_fraction_ci_high=fraction_high,
        replicas_at_sla=replicas,
        replicas_at_sla_ci_low=1 if fraction_high is None else replicas_for(1.0, fraction_high),
        replicas_at_sla_ci_high=replicas,
    )
    if peak_to_mean is not None:
        peak = replicas_for(peak_to_mean, fraction)
        out.update(
            replicas_at_sla_peak=peak,
            replicas_at_sla_peak_ci_low=1 if fraction_high is None else replicas_for(peak_to_mean, fraction_high),
            replicas_at_sla_peak_ci_high=peak,
        )
    scale = replicas * fraction if pricing == HOURLY else 1.0
    for suffix in ("", "_ci_low", "_ci_high"):
        cost = summary.get(f"cost_per_decision_at_max_sla_load_usd{suffix}")
        out[f"cost_per_decision_at_sla_replicas_usd{suffix}"] = None if cost is None else cost * scale
    return out


def cost_method(row: dict) -> str:
    """How the cost at the replicas (and its interval) was made, naming the price that applied:
    the capacity's cost interval, × replicas × fraction for a per-hour price."""
    if row.get("pricing") == HOURLY:
        return (
            f"the cost at the capacity (Wilson bounds of the useful share) × {row['replicas_at_sla']} "
            f"{'replica' if row['replicas_at_sla'] == 1 else 'replicas'} × "
            f"{row['capacity_fraction']:.3g} ({PRICING_WORDS[HOURLY]})"
        )
    return f"the cost at the capacity (Wilson bounds of the useful share) ({PRICING_WORDS[TOKENS]})"


def pricing_words(method: str | None) -> str | None:
    """Which price applied, read back from a cost-at-replicas figure's interval method."""
    return next((words for words in PRICING_WORDS.values() if method and words in method), None)
