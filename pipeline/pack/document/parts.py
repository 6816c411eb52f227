"""The parts of the evidence-pack document (`pack/document/__init__.py`) that `build_pack` measures and
compiles: figures with lineage, conditions, client validity, the comparison sections, the sweep.

Conventions, chosen so that the JSON stays exactly what the untyped dict wrote:
* a key that may be absent is `X | MISSING = MISSING`: left out of the document when never set,
  never written as null (the schema leaves it out of `required`); `X | None` is a key whose value
  may be null;
* numbers are `Number` (an int stays an int, a float a float: no coercion, same values);
* a `Part` forbids unknown keys, so a typo fails at once; a `TableRow` is a row of an analysis table (or a
  document another stage wrote) passed through: the columns its readers rely on declared, the rest kept.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import MISSING, BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
Count = Annotated[int, Field(ge=0)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
RelativePath = Annotated[str, StringConstraints(pattern=r"^(?!/)(?!.*\.\./).+")]  # in the pack folder, never out
MetricName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+$")]
Basis = Literal["production_load", "capacity_at_sla", "vendor_conditions"]  # pipeline/analysis/declare/metrics.py
# pipeline/analysis/statistics/stats.py VERDICTS; None: the figure was not claimed (or is not judged at its basis)
Verdict = Literal["holds", "holds within tolerance", "not reproduced", "inconclusive"] | None


class Part(BaseModel):
    """A part of the pack that loadproof builds itself: unknown keys are an error."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, regex_engine="python-re")


class TableRow(Part):
    """A row of an analysis table or another stage's document: every column is kept."""

    model_config = ConfigDict(extra="allow")


class FileRef(Part):
    """One file of the pack: path relative to the pack folder, sha256, and row count for a table."""

    path: RelativePath
    sha256: Sha256
    rows: Count | MISSING = MISSING


class DagsterLink(Part):
    """Where a figure lives in the Dagster UI (`pipeline/pack/assemble/ui_links.py`): the asset
    that wrote it at its partition, and the run, where the pack knows it."""

    asset: str
    partition: str
    url: str
    run_id: str | MISSING = MISSING
    run_url: str | MISSING = MISSING
    # the side-by-side pack only: its own asset, `candidate_comparison`, whose latest materialisation
    # names each combined input file (the raw timings of every partition) with its sha256
    combined_url: str | MISSING = MISSING


class FigureLineage(Part):
    """How a figure was computed: the query that computed it (`sql`), the queries it read before
    (`staged_sql`, in order) and the input files, each with its sha256; `dagster`, the figure in
    the Dagster UI (absent in packs written before it)."""

    sql: RelativePath
    sql_sha256: Sha256 | MISSING = MISSING
    staged_sql: list[FileRef] | MISSING = MISSING
    inputs: list[FileRef] = Field(min_length=1)
    dagster: DagsterLink | MISSING = MISSING


class EarlyStopping(Part):
    """How many samples a claim on this percentile needs to hold, even with none over it; long
    enough when the effective sample size (n over the design effect) reaches it and the interval
    is closed (`pipeline/analysis/judge/figures.py` `early_stopping_note`)."""

    confidence: Number
    min_samples_to_hold: Count
    # absent in packs written before stopping used the effective sample size
    effective_samples: Number | None | MISSING = MISSING
    long_enough: bool


class RunFigure(Part):
    """One run's own figure of a repeated replay (`workload.replay.repeats`)."""

    repeat: Count
    measured: Number | None
    ci_low: Number | None
    ci_high: Number | None
    n: Count
    verdict: Verdict
    interval_method: str | MISSING = MISSING  # the run's own (pipeline/analysis/statistics/dependence.py)
    design_effect: Number | None | MISSING = MISSING


class RepeatedRuns(Part):
    """A figure over the runs of a repeated replay: each run's figure, the between-run spread, and
    how the verdict's interval was formed from them (`pipeline/analysis/judge/repeated_figures.py`)."""

    runs: list[RunFigure] = Field(min_length=2)
    between_run_sd: Number | None
    between_run_range: list[Number] | None
    interval_method: str


class MeasuredBesideClaim(Part):
    """The fields every measured-beside-claimed row shares (a figure, a vendor-conditions row)."""

    candidate: str
    metric: MetricName
    unit: str
    claimed: Number | None
    measured: Number | None
    ci_low: Number | None
    ci_high: Number | None
    n: Count
    verdict: Verdict
    # the claim's tolerance the verdict used, a fraction of the claim, and where it comes from
    # (claim.tolerance, else the catalogue's default by the figure's kind); absent without a verdict
    # and in packs written before tolerances
    tolerance: Number | MISSING = MISSING
    tolerance_source: str | MISSING = MISSING


class Figure(MeasuredBesideClaim):
    """One measured figure of one candidate beside the published one, with its interval, n, verdict and lineage."""

    lineage: FigureLineage
    early_stopping: EarlyStopping | MISSING = MISSING  # percentiles
    sampled: str | MISSING = MISSING  # ITL read from a sample of the gaps
    # how the interval was found (analysis/statistics/dependence.py): order statistic, Wilson, batch means
    interval_method: str | MISSING = MISSING
    design_effect: Number | None | MISSING = MISSING  # percentiles: batch-means variance / independent
    delta: Number | None | MISSING = MISSING  # accuracy: measured − claimed
    load_level: Number | MISSING = MISSING  # the sweep's cost figure: the level it was read at
    load_level_label: str | MISSING = MISSING
    # what the figure is measured against: production_load, capacity_at_sla or vendor_conditions
    # (pipeline/analysis/declare/metrics.py BASES); absent in packs written before bases
    basis: Basis | MISSING = MISSING
    not_judged: str | MISSING = MISSING  # why a claimed figure gets no verdict here (served demand)
    no_steady_window: str | MISSING = MISSING  # read over a window the steady-state tests rejected: why
    decision_rule: str | MISSING = MISSING  # what decided the verdict (pipeline/analysis/statistics/stats.py)
    reason: str | MISSING = MISSING  # why a claimed figure has no value
    setting_to_judge: str | MISSING = MISSING  # a claim no run judges: the spec setting that would
    # an inconclusive claimed figure: the more requests and minutes of its load that would resolve it,
    # and the words (or why length alone cannot): pipeline/analysis/judge/decisive.py
    requests_to_resolve: Count | MISSING = MISSING
    minutes_to_resolve: Number | MISSING = MISSING
    to_resolve: str | MISSING = MISSING
    times_claimed: Number | MISSING = MISSING  # a judged figure: measured ÷ claimed (analysis/judge/how_far.py)
    percent_from_claim: Number | MISSING = MISSING  # (measured − claimed) ÷ claimed × 100
    timed_from: str | MISSING = MISSING  # TTFT/E2E read from the planned send time: the client lagged
    instrument_error_ms: Number | MISSING = MISSING  # the client's timing error p99, ms (judge/instrument_error.py)
    instrument_error_source: str | MISSING = MISSING  # what measured it: wire, loop receipt lag or send lag
    repeats: RepeatedRuns | MISSING = MISSING  # a repeated replay: measured, interval and n are over its runs


class Claim(Part):
    source: str
    figures: dict[str, Number]
    # a claim read from the vendor's result file (claim.from): its fields read as neither figure nor
    # condition, and the hand-written values that won over the file's; absent for hand-written claims
    unmapped: list[str] | MISSING = MISSING
    notes: list[str] | MISSING = MISSING


class Condition(Part):
    """One of the benchmark's frozen assumptions beside what the production sample shows."""

    axis: str
    claimed: str | Number | None
    production: str | Number | None


class CandidateProxyVerdict(Part):
    candidate: str
    verdict: str
    reasons: list[str]


class ProxyVerdict(Part):
    """Is the published figure a good-enough proxy? Measured (pipeline/pack/assemble/summary.py) where the
    vendor's conditions were run, else the rule on condition divergence."""

    verdict: str
    reasons: list[str]
    basis: str | MISSING = MISSING  # "measured" or "rule on condition divergence"; absent before issue 15
    candidates: list[CandidateProxyVerdict] | MISSING = MISSING  # measured: each candidate's own


FIRST_SCREEN_LINE = 240  # characters, at most, in a line of the five (issue 42, item 5)
FirstScreenLine = Annotated[str, StringConstraints(max_length=FIRST_SCREEN_LINE)]


class ExecutiveSummary(Part):
    """Five lines a committee reads first, per candidate (pipeline/pack/assemble/summary.py): each
    a summary of at most `FIRST_SCREEN_LINE` characters; the per-claim detail is the tables'."""

    candidate: str
    lines: list[FirstScreenLine] = Field(min_length=5, max_length=5)


class DivergenceAxis(Part):
    """One axis of the claim divergence (`pipeline/workload/divergence.py`)."""

    axis: str
    claimed: Any
    production: Any
    status: Literal["matches", "diverges", "unstated", "unknown"]
    decisive: bool
    reason: str


class ReplaySummary(TableRow):
    """replay_summary.json: the replay's totals (per candidate and shard among the other keys)."""

    mode: str
    planned: Count
    sent: Count
    errors: Count
    unsent: Count
    wall_s: Number


class SideBySideCell(Part):
    measured: Number | None
    ci_low: Number | None
    ci_high: Number | None
    verdict: Verdict
    tolerance: Number | MISSING = MISSING  # the tolerance the verdict used (the figure names its source)


class SideBySideRow(Part):
    metric: MetricName
    unit: str
    basis: Basis | MISSING = MISSING  # absent in packs written before bases (all at the production load)
    claimed: Number | None
    cells: list[SideBySideCell]  # one per candidate, in `side_by_side.candidates` order


class SideBySide(Part):
    """One row per figure, one cell per candidate."""

    candidates: list[str]
    rows: list[SideBySideRow]


class RankingRow(Part):
    """Candidates from the lowest cost per useful decision up; a candidate with none comes last."""

    rank: int = Field(ge=1)
    candidate: str
    cost_per_decision_usd: Number | None
    cost_per_1000_decisions_usd: Number | None | MISSING = MISSING
    cost_per_decision_usd_ci_low: Number | None
    cost_per_decision_usd_ci_high: Number | None
    pricing: str | None
    useful_decisions: Number | None
    sla_attainment: Number | None
    accuracy: Number | None


class AccuracySummaryRow(TableRow):
    """A row of the accuracy_summary table."""

    candidate: str
    scored: Count
    correct: Count
    accuracy: Number | None
    accuracy_ci_low: Number | None
    accuracy_ci_high: Number | None


class LabelCell(Part):
    accuracy: Number | None
    confused_with: str | None  # the most frequent wrong answer, with its count


class LabelRow(Part):
    label: str
    label_items: Count
    cells: list[LabelCell]  # one per candidate, in `accuracy.candidates` order


class AccuracySection(Part):
    """Accuracy on the buyer's labelled slice, per candidate and per label."""

    candidates: list[str]
    summary: list[AccuracySummaryRow]
    per_label: list[LabelRow]


class LatencyBucket(Part):
    """TTFT and E2E percentiles of one candidate in one prompt-length bucket ('all': every prompt)."""

    candidate: str
    scope: str
    n: dict[str, Count]
    values: dict[str, Number | None]


class MixFigure(Part):
    """One figure of the reply-mix section, as the figures table holds it."""

    metric: MetricName
    measured: Number | None
    ci_low: Number | None
    ci_high: Number | None
    n: Count | None


class ReplyMixRow(Part):
    """What one candidate's replies held at the production load: TTFT beside TTFO, reasoning
    tokens and their share of the output, tool-call and structured-output validity (each a row
    of `data/figures.parquet`; absent where the figure was not measured)."""

    candidate: str
    figures: dict[str, MixFigure]


class ErrorRow(TableRow):
    """A row of the error_breakdown table (every outcome but 'ok')."""

    candidate: str
    outcome: str
    requests: Count
    requests_planned: Count
    rate: Number | None
    rate_ci_low: Number | None
    rate_ci_high: Number | None


class ConcurrencyRow(Part):
    candidate: str
    peak: Count | None
    mean: Number | None


class SweepSla(Part):
    ttft_ms: Number | None
    tpot_ms: Number | None
    e2e_ms: Number | None
    min_attainment: Number
    max_error_rate: Number
    per_user: dict[str, Number] | None | MISSING = MISSING  # the SLO tier per user (sla.per_user)


class SweepLevelRow(TableRow):
    """A row of the sweep_levels table: one candidate at one load level."""

    candidate: str
    load_level: Number
    load_level_label: str
    production: bool
    requests_in_window: Count
    requests_per_s: Number | None
    output_tokens_per_s: Number | None
    goodput_requests_per_s: Number | None
    sla_attainment: Number | None
    error_rate: Number | None
    ttft_ms_p99: Number | None
    e2e_ms_p99: Number | None
    cost_per_decision_usd: Number | None
    meets_sla: bool
    clearly_misses_sla: bool


class SweepSummaryRow(TableRow):
    """A row of the sweep_summary table: one candidate's highest load still meeting the SLA."""

    candidate: str
    load_levels: Count
    production_load_level: Number | None
    max_sla_load_level: Number | None
    max_sla_load_level_label: str | None
    headroom_factor: Number | None
    goodput_requests_per_s_at_max_sla_load: Number | None
    cost_per_decision_at_max_sla_load_usd: Number | None
    first_missing_load_level: Number | None


class SweepSection(Part):
    """A load sweep (workload.replay.sweep): every level's figures and, per candidate, the highest
    load still meeting the SLA. The headline figures are the production level's."""

    mode: Literal["trace", "rate", "concurrency"]
    knob: str | MISSING = MISSING
    unit: str
    production_load_level: Number
    production_load_level_label: str | MISSING = MISSING
    sla: SweepSla
    levels: list[SweepLevelRow]
    summary: list[SweepSummaryRow]
    replay: dict[str, Any] | None | MISSING = MISSING  # sweep_replay.json: each level's replay
    lineage: FigureLineage | None | MISSING = MISSING
