"""Everything an evidence pack is built from, read from one pack folder in one place.

The pack is assembled from ~15 files that earlier assets wrote into the folder (a candidate ×
version partition's, or the shared folder the side-by-side comparison gathered them into).
Reading them here, into one `PackInputs`, keeps the builder (`pack/assemble/model.py`) free of file
access and the asset shell (`assets/pack.py`) down to a call: a test can build a pack from a
folder without Dagster.

Which files must exist is unchanged: the analysis tables, the profile, the replay summary, the
client calibration and the endpoint fingerprints always; the claim divergence, the ITL histogram
and the load sweep's files only when their step ran.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.analysis.endpoint_view.endpoint_views import read_views
from pipeline.analysis.judge.figures_table import figures_from_table
from pipeline.contracts import (
    ACCURACY_BY_LABEL,
    ACCURACY_RESULTS,
    ACCURACY_SUMMARY,
    ARM_FIGURES,
    ARM_TIMINGS,
    CAPACITY,
    CLAIM_DIVERGENCE,
    CLIENT_CALIBRATION,
    COST_PER_DECISION,
    ENDPOINT_FINGERPRINT,
    ERROR_BREAKDOWN,
    FIGURES,
    GPU_ENERGY,
    ITL_HISTOGRAM,
    LATENCY_PERCENTILES,
    PREFIX_CACHE_HITS,
    PROMPT_PROFILE_DOCUMENT,
    RAW_TIMINGS,
    REPLAY_SUMMARY,
    SERVER_LEVELS,
    SERVER_TIMINGS,
    SERVER_TTFT,
    SWEEP_LEVELS,
    SWEEP_REPLAY,
    SWEEP_SUMMARY,
    SWEEP_TIMINGS,
    THROUGHPUT,
    TOKEN_AGREEMENT,
)
from pipeline.files.layout import PackLayout
from pipeline.plan.warm_prefixes import planned_warm_up
from pipeline.spec import LoadedSpec


@dataclass(frozen=True)
class SweepTables:
    """The load sweep's files: empty (and no replay summary) when no sweep ran."""

    level_rows: list[dict] = field(default_factory=list)
    summary_rows: list[dict] = field(default_factory=list)
    capacity_rows: list[dict] = field(default_factory=list)  # the capacity at the SLA (analysis made them)
    replay: dict | None = None
    timings_rows: int = 0


@dataclass(frozen=True)
class PackInputs:
    """What one pack is built from: the spec, the folder (for lineage: SQL copies and hashes),
    and the contents of the files the earlier assets wrote there."""

    loaded: LoadedSpec
    layout: PackLayout
    figures: list[dict]  # data/figures.parquet: every figure the pack shows, as analysis made it
    profile: dict
    replay_summary: dict
    latency_rows: list[dict]
    throughput_rows: list[dict]
    cost_rows: list[dict]
    raw_timings_rows: int
    accuracy_rows: list[dict]
    accuracy_label_rows: list[dict]
    error_rows: list[dict]
    accuracy_results_rows: int
    calibration: dict | None
    claim_divergence: dict
    itl_histogram_rows: int | None  # None: no ITL histogram beside the raw timings
    sweep: SweepTables
    endpoint_fingerprints: list[dict]
    token_agreement: list[dict]
    prefix_cache_hits: list[dict] = field(default_factory=list)
    server_timings: list[dict] = field(default_factory=list)  # none from a server without per-request timings
    server_ttft: list[dict] = field(default_factory=list)  # none without server metrics
    server_levels: list[dict] = field(default_factory=list)  # per load level; none without server metrics
    gpu_energy: list[dict] = field(default_factory=list)  # none without a GPU exporter
    warm_up_requests: int = 0  # the earlier requests sent first (workload.replay.warm_prefixes)
    arm_figure_rows: list[dict] = field(default_factory=list)  # none without workload.replay.arms
    arm_timings_rows: int = 0


# the analysis tables the pack reads whole: PackInputs' field, its file
ANALYSIS_TABLES = {
    "latency_rows": LATENCY_PERCENTILES,
    "throughput_rows": THROUGHPUT,
    "cost_rows": COST_PER_DECISION,
    "accuracy_rows": ACCURACY_SUMMARY,
    "accuracy_label_rows": ACCURACY_BY_LABEL,
    "error_rows": ERROR_BREAKDOWN,
}


def read_pack_inputs(loaded: LoadedSpec, layout: PackLayout) -> PackInputs:
    """Read every input of the pack in `layout` (after the comparison has gathered its partitions)."""
    views = read_views(layout)
    return PackInputs(
        loaded=loaded,
        layout=layout,
        figures=figures_from_table(pq.read_table(layout.path(FIGURES))),
        profile=_json(layout.path(PROMPT_PROFILE_DOCUMENT)),
        replay_summary=_json(layout.path(REPLAY_SUMMARY)),
        **{name: _rows(layout.path(file)) for name, file in ANALYSIS_TABLES.items()},
        raw_timings_rows=_row_count(layout.path(RAW_TIMINGS)),
        accuracy_results_rows=_row_count(layout.path(ACCURACY_RESULTS)),
        calibration=_json(layout.path(CLIENT_CALIBRATION)),
        claim_divergence=_claim_divergence(layout.path(CLAIM_DIVERGENCE)),
        itl_histogram_rows=_row_count_if_written(layout.path(ITL_HISTOGRAM)),
        sweep=read_sweep_tables(layout),
        endpoint_fingerprints=_json(layout.path(ENDPOINT_FINGERPRINT)),
        # the endpoint's own view, as analysis made it (pipeline/analysis/endpoint_view/endpoint_views.py)
        token_agreement=views[TOKEN_AGREEMENT.name],
        prefix_cache_hits=views[PREFIX_CACHE_HITS.name],
        server_timings=views[SERVER_TIMINGS.name],
        server_ttft=views[SERVER_TTFT.name],
        server_levels=views[SERVER_LEVELS.name],
        warm_up_requests=len(planned_warm_up(layout)),
        gpu_energy=views[GPU_ENERGY.name],
        arm_figure_rows=_rows_if_written(layout.path(ARM_FIGURES)),
        arm_timings_rows=_row_count_if_written(layout.path(ARM_TIMINGS)) or 0,
    )


def read_sweep_tables(layout: PackLayout) -> SweepTables:
    """The sweep's tables and replay summary from the pack folder (empty when no sweep ran)."""
    return SweepTables(
        level_rows=_rows_if_written(layout.path(SWEEP_LEVELS)),
        summary_rows=_rows_if_written(layout.path(SWEEP_SUMMARY)),
        capacity_rows=_rows_if_written(layout.path(CAPACITY)),
        replay=_json_if_written(layout.path(SWEEP_REPLAY)),
        timings_rows=_row_count_if_written(layout.path(SWEEP_TIMINGS)) or 0,
    )


def _claim_divergence(path: Path) -> dict:
    """prompt_profile's claim divergence (axes + proxy verdict), when that step ran."""
    return _json(path) if path.is_file() else {"axes": [], "proxy_verdict": None}


def _json(path: Path):
    return json.loads(path.read_text())


def _json_if_written(path: Path):
    return _json(path) if path.is_file() else None


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def _rows_if_written(path: Path) -> list[dict]:
    return _rows(path) if path.is_file() else []


def _row_count(path: Path) -> int:
    return pq.read_metadata(path).num_rows


def _row_count_if_written(path: Path) -> int | None:
    return _row_count(path) if path.is_file() else None
