"""The typed parts of the pack's arm and capacity sections (`vendor_conditions`,
`headline_waterfall`, `capacity`): declared with the document they belong to, built in
`pack/assemble/arms.py` and `pack/assemble/capacity.py`."""

from __future__ import annotations

from typing import Literal

from pydantic import MISSING

from pipeline.pack.document.parts import (
    Count,
    FigureLineage,
    MeasuredBesideClaim,
    MetricName,
    MixFigure,
    Number,
    Part,
)


class VendorConditionsRow(MeasuredBesideClaim):
    """One claimed figure measured at the vendor's own conditions."""

    conditions: str
    interval_method: str | None | MISSING = MISSING
    no_steady_window: str | MISSING = MISSING  # the arm's window the steady-state tests rejected: why
    lineage: FigureLineage


class WaterfallStep(Part):
    """One step of the ladder: the figure with this axis added, and its change from the step before."""

    axis: str
    label: str
    arm: str | None  # the arm that measured it; None for capacity at SLA and production load
    measured: Number | None
    ci_low: Number | None
    ci_high: Number | None
    n: Count
    change: Number | None  # measured − the previous step's measured (None for the first step)
    change_ci_low: Number | None
    change_ci_high: Number | None
    reason: str | MISSING = MISSING  # why the step has no value
    lineage: FigureLineage | None


class WaterfallRow(Part):
    """A claimed capacity or latency figure walked from the vendor's conditions to the buyer's load."""

    candidate: str
    metric: MetricName
    unit: str
    claimed: Number | None
    larger_is_better: bool
    steps: list[WaterfallStep]


class CapacityRow(Part):
    """One candidate's capacity at the SLA (levels in the sweep's unit: × logged traffic,
    requests/s or requests in flight; `knob` the replay setting the levels turn)."""

    candidate: str
    knob: str
    max_sla_level: Number | None  # None: not even the production level met the SLA
    max_sla_level_label: str | None
    first_missed_level: Number | None  # None: no level missed (the capacity is a lower bound)
    first_missed_level_label: str | None
    bracket_closed: bool
    reason: str
    requests_per_s: Number | None
    requests_per_s_ci_low: Number | None
    requests_per_s_ci_high: Number | None
    output_tokens_per_s: Number | None
    ci_low: Number | None  # of output_tokens_per_s
    ci_high: Number | None
    n: Count | None  # requests in the steady window at the highest SLA-meeting level
    levels_run: Count  # levels measured, the production level included
    # why the highest SLA-meeting level's own window is not steady (its figures are then not decisive);
    # None: steady; absent in packs before the levels were tested
    no_steady_window: str | None | MISSING = MISSING
    # what the capacity means for a deployment (pipeline/analysis/sizing/replicas.py); absent in packs before it
    production_level: Number | None | MISSING = MISSING
    capacity_fraction: Number | None | MISSING = MISSING  # max_sla_level / production_level
    capacity_fraction_ci_low: Number | None | MISSING = MISSING
    capacity_fraction_ci_high: Number | None | MISSING = MISSING  # None: no level missed
    replicas_at_sla: Count | None | MISSING = MISSING
    replicas_at_sla_ci_low: Count | None | MISSING = MISSING
    replicas_at_sla_ci_high: Count | None | MISSING = MISSING
    peak_to_mean_ratio: Number | None | MISSING = MISSING
    replicas_at_sla_peak: Count | None | MISSING = MISSING
    replicas_at_sla_peak_ci_low: Count | None | MISSING = MISSING
    replicas_at_sla_peak_ci_high: Count | None | MISSING = MISSING
    pricing: Literal["hourly", "tokens"] | None | MISSING = MISSING
    cost_per_decision_at_sla_replicas_usd: Number | None | MISSING = MISSING
    cost_per_decision_at_sla_replicas_usd_ci_low: Number | None | MISSING = MISSING
    cost_per_decision_at_sla_replicas_usd_ci_high: Number | None | MISSING = MISSING
    # users at an SLO tier per user (sla.per_user; pipeline/analysis/sizing/users_at_tier.py); absent in packs before it
    users_basis: str | MISSING = MISSING  # concurrency (closed loop) or mean streams in flight (Little's law)
    per_user_output_tokens_per_s_min: Number | None | MISSING = MISSING  # None: no tier in the spec
    per_user_ttft_ms_max: Number | None | MISSING = MISSING
    per_user_min_share: Number | None | MISSING = MISSING
    tier_level: Number | None | MISSING = MISSING  # the highest level meeting the tier (every lighter one too)
    tier_level_label: str | None | MISSING = MISSING
    tier_first_missed_level: Number | None | MISSING = MISSING  # None: no level missed (a lower bound)
    tier_first_missed_level_label: str | None | MISSING = MISSING
    tier_bracket_closed: bool | None | MISSING = MISSING
    per_user_attainment_at_tier: Number | None | MISSING = MISSING
    streams_at_tier: Count | None | MISSING = MISSING
    users_at_slo_tier: Number | None | MISSING = MISSING
    users_at_slo_tier_ci_low: Number | None | MISSING = MISSING
    users_at_slo_tier_ci_high: Number | None | MISSING = MISSING
    cost_per_user_hour_usd: Number | None | MISSING = MISSING
    cost_per_user_hour_usd_ci_low: Number | None | MISSING = MISSING
    cost_per_user_hour_usd_ci_high: Number | None | MISSING = MISSING
    lineage: FigureLineage | None | MISSING = MISSING


class BillCheckRow(Part):
    """Billed vs counted tokens for one candidate (`pipeline/pack/assemble/bill_check.py`): the
    throughput table's bill-check columns (sql/bill_check.sql) and the three ratio figures, with
    cost per useful decision (from billed tokens) beside them; the verdict is analysis's."""

    candidate: str
    counter: str | None  # the plan's tokenizer setting the counted side used
    counter_exact: bool | None  # whether it is the candidate's own tokenizer (else: not a bill verdict)
    tolerance: Number | None
    verdict: str | None
    requests: Count | None  # successful steady-window requests that reported usage
    prompt_tokens_billed: Count | None
    prompt_tokens_counted: Count | None
    output_tokens_billed: Count | None
    output_tokens_counted: Count | None
    cost_billed_usd: Number | None  # at the token prices; None when priced by the hour
    cost_counted_usd: Number | None
    figures: dict[str, MixFigure]  # billed_to_counted_* and cost_per_decision_usd


class SteadyStateTest(Part):
    """One steady-state test on one series of send-time span medians (pipeline/analysis/statistics/steady_state.py)."""

    test: Literal["trend (Mann-Kendall)", "level shift (Pettitt)"]
    series: str  # ttft_ms_p50 or tpot_ms_p50: the span medians tested
    pass_number: Count  # 1: the configured window; 2: after a leading ramp was trimmed
    bins: Count
    statistic: Number | None  # Kendall's tau; Pettitt's K
    p_value: Number | None
    relative_change: Number | None  # the Theil–Sen drift or the shift of the medians, over the level
    at_bin: Count | None  # a level shift's first span after the change
    decision: Literal["passes", "fails"]


class SteadyStateRow(Part):
    """One candidate's production-load window: detected, not assumed. Seconds from its first send."""

    candidate: str
    steady_window: bool  # false: no steady window; its figures carry `no_steady_window` and no decisive verdict
    reason: str | None  # why there is none, or what was trimmed
    window_start_s: Number | None  # the window the figures are read over
    window_end_s: Number | None
    configured_window_start_s: Number | None  # first send + warmup_s … last end − cooldown_s
    configured_window_end_s: Number | None
    trimmed_bins: Count | None
    min_length_s: Number | None
    min_length_term: str | None  # the bound that set it: 5 × E2E p90, or the precision bound
    tests: list[SteadyStateTest]
