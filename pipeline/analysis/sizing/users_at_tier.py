"""Users at an SLO tier: the most concurrent streams that each keep an output speed of at least the
tier's floor (tokens/s per stream) with TTFT under its ceiling, on the buyer's mix (`sla.per_user`;
Artificial Analysis' AA-AgentPerf reports capacity as concurrent users at such tiers).

Made from the capacity search's levels, as the capacity at the SLA is:

- **Per level** (sql/per_user_tier.sql, joined into sql/sweep_levels.sql): the share of the
  level's steady-window streams that meet the tier (a stream: succeeded, TTFT ≤ the ceiling,
  output tokens / (E2E − TTFT) ≥ the floor), with its Wilson interval; the level meets the tier
  when that share reaches `sla.per_user.min_share` (default 0.95: the SLA's own default
  attainment, so "met" reads the same way for both knees — the 5th-percentile stream keeps the
  tier). The level's **users**: a closed loop's concurrency (each user a stream slot, one request
  in flight at a time); an open loop (trace, rate) has no user count of its own, so its users are
  the mean streams in flight by Little's law, (streams sent in the window / its seconds) × their
  mean E2E.
- **Users at the tier** (sql/sweep_summary.sql): the users of the highest level meeting the tier
  below the first level that misses it (every lighter level met it too), with the **bracket** as
  its interval: from those users (the point itself: users are claimed only where the tier was
  met) to the users of the first level missed (open where none missed, or where that level's
  Little's-law users came out no higher — failed requests end early: a lower bound). The search
  bisects on the SLA, not on the tier, so the bracket is as tight as the levels it ran near the
  tier's knee; `tier_bracket_closed` says whether it is within the search's precision.
- **Cost per user-hour** at the tier: the level's cost (sql/cost_per_decision.sql: a per-hour price
  × replicas, or the tokens billed × the per-token prices) per hour of its window ÷ its users —
  for a per-hour price, the price per hour ÷ users; for a per-token price, the tokens one user
  draws in an hour × the prices. Its interval carries the users bracket through: the same cost
  at the first level missed is the other end (open where none missed).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from pipeline.analysis.statistics.intervals import with_wilson
from pipeline.analysis.tabulate import tables
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.duck.session import QuerySession
from pipeline.replay.conditions.capacity_search import is_closed
from pipeline.spec import Spec

CLOSED_LOOP_USERS = "concurrency (closed loop: each user one request in flight)"
OPEN_LOOP_USERS = "mean streams in flight (Little's law: arrival rate × mean E2E)"
NO_TIER = "no SLO tier per user in the spec (sla.per_user)"

# the tier's bounds (capacity column and query parameter: sla.per_user's field)
TIER_BOUNDS = {
    "per_user_output_tokens_per_s_min": "output_tokens_per_s_min",
    "per_user_ttft_ms_max": "ttft_ms_max",
    "per_user_min_share": "min_share",
}
# the levels that bracket the tier (capacity column: sweep_summary's column)
TIER_LEVELS = {
    "tier_level": "max_tier_load_level",
    "tier_level_label": "max_tier_load_level_label",
    "tier_first_missed_level": "first_tier_missing_load_level",
    "tier_first_missed_level_label": "first_tier_missing_load_level_label",
}
# what was measured at the highest level meeting the tier (capacity column: sweep_summary's column)
AT_TIER_LEVEL = {
    "per_user_attainment_at_tier": "per_user_attainment_at_max_tier_load",
    "streams_at_tier": "streams_at_max_tier_load",
}
TIER_FIGURES = ("users_at_slo_tier", "cost_per_user_hour_usd")
TIER_COLUMNS = (
    "users_basis",
    *TIER_BOUNDS,
    *TIER_LEVELS,
    "tier_bracket_closed",
    *AT_TIER_LEVEL,
    *(f"{figure}{end}" for figure in TIER_FIGURES for end in ("", "_ci_low", "_ci_high")),
)


def tier_params(spec: Spec) -> dict:
    """The tier's bounds as query parameters (NULL without `sla.per_user`), and whose users a
    level holds (a closed loop: its concurrency)."""
    tier = spec.sla.per_user
    bounds = {name: None if tier is None else getattr(tier, field) for name, field in TIER_BOUNDS.items()}
    return {**bounds, "closed_loop": spec.workload.replay.mode == "concurrency"}


def users_basis(spec: Spec) -> str:
    return CLOSED_LOOP_USERS if spec.workload.replay.mode == "concurrency" else OPEN_LOOP_USERS


def per_user_table(
    source: Path | pa.Table, spec: Spec, z: float | None = None, queries: QueryCatalog = REPO_QUERIES
) -> pa.Table:
    """sql/per_user_tier.sql over one level's raw timings (`spec`: the level's, for its window),
    with the Wilson interval of the share of streams meeting the tier."""
    with tables.steady_session(source, spec, queries) as session:
        return per_user_from(session, spec, z)


def per_user_from(session: QuerySession, spec: Spec, z: float | None = None) -> pa.Table:
    """`per_user_table` from the level's `steady_session` already open (its analysis's)."""
    session.params.update(tier_params(spec))
    table = session.run("per_user_tier")
    z = session.params["z"] if z is None else z
    shares = [
        None if met is None or not n else met / n
        for met, n in zip(table.column("streams_meeting_tier").to_pylist(), table.column("streams").to_pylist())
    ]
    table = table.append_column("per_user_attainment", pa.array(shares, pa.float64()))
    table = with_wilson(table, "streams_meeting_tier", "streams", "per_user_attainment", z)
    if spec.sla.per_user is None:  # no tier: no interval either
        for name in ("per_user_attainment_ci_low", "per_user_attainment_ci_high"):
            index = table.schema.get_field_index(name)
            table = table.set_column(index, name, pa.nulls(table.num_rows, pa.float64()))
    return table


def tier_columns(spec: Spec, summary: dict, precision: float) -> dict:
    """TIER_COLUMNS of one candidate's capacity row from its sweep_summary row; the figures None
    where the spec has no tier or no level met it."""
    tier = spec.sla.per_user
    out: dict = dict.fromkeys(TIER_COLUMNS)
    out["users_basis"] = users_basis(spec)
    if tier is None:
        return out
    out.update({name: getattr(tier, field) for name, field in TIER_BOUNDS.items()})
    out.update({name: summary.get(column) for name, column in (TIER_LEVELS | AT_TIER_LEVEL).items()})
    last_met, first_missed = out["tier_level"], out["tier_first_missed_level"]
    integer = spec.workload.replay.mode == "concurrency"
    out["tier_bracket_closed"] = is_closed(last_met, first_missed, precision, integer=integer)
    users, users_missed = summary.get("users_at_max_tier_load"), summary.get("users_at_first_tier_miss")
    if last_met is None or users is None:
        return out
    cost, cost_missed = (
        summary.get("cost_per_user_hour_at_max_tier_load_usd"),
        summary.get("cost_per_user_hour_at_first_tier_miss_usd"),
    )
    if users_missed is not None and users_missed < users:  # an open loop's Little's-law users can fall as
        users_missed = cost_missed = None  # failures shorten E2E: the level missed bounds nothing (open end)
    ends = [value for value in (cost, cost_missed) if value is not None]
    both = cost is not None and cost_missed is not None
    out.update(
        users_at_slo_tier=users,
        users_at_slo_tier_ci_low=users,
        users_at_slo_tier_ci_high=users_missed,
        cost_per_user_hour_usd=cost,
        cost_per_user_hour_usd_ci_low=min(ends) if both else None,
        cost_per_user_hour_usd_ci_high=max(ends) if both else None,
    )
    return out


def tier_note(row: dict, name: str) -> dict:
    """What a users-at-the-tier figure carries besides its value: the level it was read at, or
    why it has none."""
    if row.get("per_user_output_tokens_per_s_min") is None:
        return {"reason": NO_TIER}
    tier = (
        f"tier: ≥ {row['per_user_output_tokens_per_s_min']:g} tokens/s per stream, TTFT ≤ "
        f"{row['per_user_ttft_ms_max']:g} ms, for ≥ {row['per_user_min_share']:.0%} of streams"
    )
    if row.get("tier_level") is None:
        return {"reason": f"no load level met the SLO tier ({tier})"}
    note = {
        "load_level": row["tier_level"],
        "load_level_label": row.get("tier_level_label") or f"{row['tier_level']:.3g}",
        "interval_method": f"the users bracket: {row.get('users_basis')} at the level met to the first missed; {tier}",
    }
    if row.get(name) is None:
        note["reason"] = "not measured at that level"
    elif row.get("tier_first_missed_level") is None:
        note["reason"] = f"no level missed the SLO tier up to {note['load_level_label']} (a lower bound)"
    elif row.get("users_at_slo_tier_ci_high") is None:
        note["reason"] = (
            f"the level first missing the SLO tier ({row.get('tier_first_missed_level_label')}) held fewer users "
            f"than {note['load_level_label']} by Little's law (failed requests end early): the upper end is open, "
            "a lower bound"
        )
    elif not row.get("tier_bracket_closed"):
        note["reason"] = (
            f"the tier's bracket is not closed: met at {note['load_level_label']}, first missed at "
            f"{row.get('tier_first_missed_level_label')} (the capacity search bisects on the SLA, not on the tier)"
        )
    return note
