"""The catalogue's sizing entries (`pipeline/analysis/declare/catalogue.py` includes them): what the
capacity at the SLA means for a deployment, made by `pipeline/analysis/sizing/replicas.py` as columns of
the capacity rows and read at the capacity at the SLA, as every capacity figure is; and the users
at an SLO tier per user with their cost per user-hour (pipeline/analysis/sizing/users_at_tier.py), read
from the same rows at the tier's own knee."""

from __future__ import annotations

from pipeline.analysis.declare.catalogue_model import BRACKET, CAPACITY_AT_SLA, USEFUL_SHARE, Metric, capacity_source


def _sizing(name: str, unit: str, larger_is_better: bool, display: str, definition: str, interval: str) -> Metric:
    """What the capacity at the SLA means for a deployment (pipeline/analysis/sizing/replicas.py, columns
    of the capacity rows): judged nowhere but at the capacity at the SLA."""
    return Metric(
        name=name,
        unit=unit,
        larger_is_better=larger_is_better,
        kind="cost" if unit == "USD" else "sizing",
        sources={CAPACITY_AT_SLA: capacity_source(name, f"{name}_ci_low", f"{name}_ci_high")},
        interval=interval,
        display=display,
        definition=definition,
    )


SIZING = (
    _sizing(
        "capacity_fraction",
        "× production load",
        True,
        "Capacity at the SLA (× production load)",
        "the highest load level met at the SLA / the production load level: below 1, the share of the buyer's load "
        "one deployment carries at the SLA",
        BRACKET,
    ),
    _sizing(
        "replicas_at_sla",
        "replicas",
        False,
        "Replicas for the production load at the SLA",
        "ceil(1 / the capacity fraction): deployments as measured that carry the production load, each at or below "
        "its capacity at the SLA",
        "the capacity bracket carried through (its high end: the fewest replicas)",
    ),
    _sizing(
        "replicas_at_sla_peak",
        "replicas",
        False,
        "Replicas for the production peak at the SLA",
        "ceil(peak-to-mean / the capacity fraction), the peak being the sampled log's busiest arrival-rate bin over "
        "its mean (workload.profile.rate_bin_s)",
        "the capacity bracket carried through (its high end: the fewest replicas)",
    ),
    _sizing(
        "cost_per_decision_at_sla_replicas_usd",
        "USD",
        False,
        "Cost per useful decision at the replicas",
        "per-hour price: the cost per useful decision at the capacity × replicas × the capacity fraction (the "
        "replicas share the production load); per-token price: the cost per useful decision at the capacity (it "
        "does not scale with replicas)",
        USEFUL_SHARE + ", at the replica count",
    ),
    # the SLO tier per user (sla.per_user): pipeline/analysis/sizing/users_at_tier.py
    _sizing(
        "users_at_slo_tier",
        "users",
        True,
        "Users at an SLO tier",
        "the most concurrent streams that each keep an output speed of at least the tier's floor (tokens/s per "
        "stream) with TTFT under its ceiling, on the buyer's mix: the users of the highest load level at which "
        "sla.per_user.min_share of the streams meet both (closed loop: its concurrency; open loop: mean streams in "
        "flight, Little's law)",
        "the tier's bracket: from the users at the level met to those at the first level missed (open where none "
        "missed)",
    ),
    _sizing(
        "cost_per_user_hour_usd",
        "USD",
        False,
        "Cost per user-hour at the SLO tier",
        "the cost per hour of the level with the users at an SLO tier, over those users: a per-hour price × "
        "replicas ÷ users; a per-token price: the tokens one user draws in an hour × the prices",
        "the tier's bracket carried through: the same cost at the first level missed is the other end",
    ),
)
