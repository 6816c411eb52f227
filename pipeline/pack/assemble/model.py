"""Build the evidence pack (`pack/document/__init__.py`) from its inputs (`pack/assemble/inputs.py`): the figures
with their lineage, the comparison sections, the conditions, the sweep (the keys: ARCHITECTURE.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import metadata
from typing import TypeVar

from pipeline.analysis.declare import catalogue
from pipeline.analysis.endpoint_view.server_view import cold_cache_note
from pipeline.analysis.judge.figures import ARM_QUERY
from pipeline.analysis.sizing.sweep import sweep_ran
from pipeline.contracts import ACCURACY_RESULTS, ITL_HISTOGRAM, RAW_TIMINGS
from pipeline.files.hashing import file_ref
from pipeline.pack.assemble import arms as pack_arms
from pipeline.pack.assemble import comparison, served_precision, summary
from pipeline.pack.assemble import sweep as pack_sweep
from pipeline.pack.assemble.bill_check import bill_check_section
from pipeline.pack.assemble.capacity import capacity_section
from pipeline.pack.assemble.decision import decision_block
from pipeline.pack.assemble.inputs import PackInputs
from pipeline.pack.assemble.lineage_steps import LATENCY_STEPS, THROUGHPUT_STEPS, lineage
from pipeline.pack.assemble.steady_state import steady_state_section
from pipeline.pack.document import (
    EvidencePackDraft,
    GlossaryEntry,
    PartitionRun,
    RunLineage,
    endpoint_parts,
    parts,
    section_parts,
)
from pipeline.pack.document.decision_parts import Decision
from pipeline.pack.document.section_parts import CapacityRow
from pipeline.replay.client_validity.calibration import CLIENT_LIMITED_LAG_MS
from pipeline.spec import LoadedSpec

P = TypeVar("P", bound=parts.Part)
PACKAGES = ("loadproof", "dagster", "duckdb", "pyarrow", "httpx", "pydantic")


def conditions(
    loaded: LoadedSpec, profile: dict, peak_concurrency: int | None, served: list[dict] | None = None
) -> list[parts.Condition]:
    """The benchmark's frozen assumptions beside what the production sample shows, axis by axis;
    after the spec's production precision, the precision each candidate serves (`served`:
    `served_precision.served_precision_rows`)."""
    claimed = loaded.spec.claim.conditions
    dispersion: list[dict] = profile.get("dispersion") or []  # the 1st entry: the narrowest bin
    rows = [
        {
            "axis": "input tokens (claim) / prompt tokens p50 (production)",
            "claimed": claimed.input_tokens,
            "production": profile["prompt_tokens_p50"],
        },
        {"axis": "prompt tokens p99", "claimed": claimed.input_tokens, "production": profile["prompt_tokens_p99"]},
        {
            "axis": "output tokens (claim) / p50 (production)",
            "claimed": claimed.output_tokens,
            "production": profile["output_tokens_p50"],
        },
        {"axis": "output tokens p99", "claimed": claimed.output_tokens, "production": profile["output_tokens_p99"]},
        {
            "axis": "concurrency / batch size (peak in flight during replay)",
            "claimed": claimed.concurrency,
            "production": peak_concurrency,
        },
        {"axis": "arrival rate (requests/s)", "claimed": None, "production": profile["arrival_rate_per_s"]},
        {"axis": "inter-arrival coefficient of variation", "claimed": None, "production": profile["interarrival_cv"]},
        {
            "axis": "concurrency in production (Little's law / peak, logged latencies)",
            "claimed": claimed.concurrency,
            "production": _pair(profile.get("concurrency_littles_law"), profile.get("concurrency_peak_logged")),
        },
        {
            "axis": "burstiness: index of dispersion (1st bin width) / peak-to-mean",
            "claimed": None,
            "production": _pair(
                dispersion[0].get("index_of_dispersion") if dispersion else None,
                profile.get("peak_to_mean_ratio"),
            ),
        },
        {
            "axis": "long-context / structured-output / multi-turn share",
            "claimed": None,
            "production": _shares(profile, ("long_context", "structured_output", "multi_turn")),
        },
        {
            "axis": "requests offering tools / asking a JSON schema / setting reasoning (share)",
            "claimed": None,
            "production": _shares(profile, ("with_tools", "json_schema", "reasoning_setting")),
        },
        {
            "axis": "multi-turn sessions: share of requests / turns per session p50 / think time p50 (s)",
            "claimed": None,
            "production": _sessions(profile),
        },
        {
            "axis": "prefix reuse (share of prompt blocks sent before)",
            "claimed": None,
            "production": profile.get("prefix_block_reuse_share"),
        },
        {"axis": "precision", "claimed": claimed.precision, "production": loaded.spec.workload.production.precision},
        *served_precision.condition_rows(claimed.precision, served or []),
        {"axis": "hardware", "claimed": claimed.hardware, "production": loaded.spec.workload.production.hardware},
        {"axis": "dataset", "claimed": claimed.dataset, "production": "production sample"},
    ]
    return _parts(parts.Condition, rows)


def _pair(first: float | None, second: float | None) -> str | None:
    if first is None and second is None:
        return None
    return " / ".join("—" if v is None else f"{v:.3g}" for v in (first, second))


def _shares(profile: dict, keys: tuple[str, ...]) -> str:
    return " / ".join("—" if profile.get(f"share_{k}") is None else f"{profile[f'share_{k}']:.0%}" for k in keys)


def _sessions(profile: dict) -> str | None:
    if not profile.get("sessions"):
        return None
    share, turns, think = (
        profile.get(k) for k in ("share_requests_in_sessions", "session_turns_p50", "session_think_time_s_p50")
    )
    return " / ".join("—" if v is None else f"{v:.3g}" for v in (share, turns, think))


def build_pack(run_id: str, inputs: PackInputs, generated_at: str | None = None) -> EvidencePackDraft:
    """The pack from its inputs: every figure with its lineage (the SQL copied into the pack, the
    input files hashed), the comparison sections, the conditions and the sweep. Each part is
    validated here, so a malformed one fails before anything is written. `generated_at`: when the
    run it documents was created (so the same files give the same pack), else now."""
    loaded, spec = inputs.loaded, inputs.loaded.spec
    figures, input_refs, sweep_lineage, capacity = _figures(inputs)
    arm_sections = _arm_sections(inputs, figures, sweep_lineage)
    waterfall = [row.model_dump(mode="json") for row in arm_sections["headline_waterfall"]]
    divergence = inputs.claim_divergence
    served = served_precision.served_precision_rows(spec.claim.conditions.precision, inputs.endpoint_fingerprints)
    expected = served_precision.with_served_precision(
        divergence["proxy_verdict"] and {**divergence["proxy_verdict"], "basis": summary.RULE}, served
    )
    measured = served_precision.with_served_precision(
        summary.measured_proxy_verdict(figures, waterfall, spec.workload.proxy_tolerance.capacity_ratio), served
    )
    lag_p99 = max((row["schedule_lag_ms_p99"] or 0.0 for row in inputs.throughput_rows), default=None)
    peak_concurrency = max((row.get("peak_concurrency") or 0 for row in inputs.throughput_rows), default=None)
    return EvidencePackDraft(
        run_id=run_id,
        spec_sha256=loaded.sha256,
        spec_name=spec.name,
        generated_at=generated_at or datetime.now(UTC).isoformat(timespec="seconds"),
        claim=parts.Claim(
            source=spec.claim.source,
            figures=dict(spec.claim.figures),
            **({"unmapped": list(spec.claim.unmapped)} if spec.claim.from_ else {}),
            **({"notes": list(spec.claim.notes)} if spec.claim.notes else {}),
        ),
        figures=_parts(parts.Figure, figures),
        vendor_conditions=arm_sections["vendor_conditions"],
        headline_waterfall=arm_sections["headline_waterfall"],
        conditions=conditions(
            loaded, inputs.profile, peak_concurrency or inputs.replay_summary.get("peak_in_flight"), served
        ),
        proxy_verdict=_part(parts.ProxyVerdict, measured or expected),
        expected_proxy_verdict=_part(parts.ProxyVerdict, expected if measured else None),
        decision=Decision.model_validate(decision_block(figures)),
        executive_summary=_parts(parts.ExecutiveSummary, summary.executive_summary(figures, waterfall)),
        claim_divergence=_parts(parts.DivergenceAxis, divergence["axes"]),
        profile=inputs.profile,
        replay=parts.ReplaySummary.model_validate(inputs.replay_summary),
        client_validity=client_validity(lag_p99, inputs.calibration),
        inputs=_parts(parts.FileRef, input_refs),
        side_by_side=parts.SideBySide.model_validate(comparison.side_by_side(figures)),
        ranking=_parts(
            parts.RankingRow, comparison.ranking(inputs.cost_rows, inputs.throughput_rows, inputs.accuracy_rows)
        ),
        accuracy=_part(
            parts.AccuracySection, comparison.accuracy_section(inputs.accuracy_rows, inputs.accuracy_label_rows)
        ),
        latency_by_bucket=_parts(parts.LatencyBucket, comparison.latency_by_bucket(inputs.latency_rows)),
        reply_mix=_parts(parts.ReplyMixRow, comparison.reply_mix(figures)),
        bill_check=_parts(section_parts.BillCheckRow, bill_check_section(inputs.throughput_rows, figures)),
        errors_by_type=_parts(parts.ErrorRow, comparison.errors_by_type(inputs.error_rows)),
        concurrency=[
            parts.ConcurrencyRow(
                candidate=row["candidate"], peak=row.get("peak_concurrency"), mean=row.get("mean_concurrency")
            )
            for row in inputs.throughput_rows
        ],
        steady_state=_parts(section_parts.SteadyStateRow, steady_state_section(inputs.throughput_rows)),
        sweep=_part(
            parts.SweepSection,
            pack_sweep.sweep_section(
                spec, inputs.sweep.level_rows, inputs.sweep.summary_rows, inputs.sweep.replay, sweep_lineage
            ),
        ),
        capacity=_optional_parts(CapacityRow, capacity),
        versions={name: _version(name) for name in PACKAGES},
        endpoint_fingerprints=_parts(endpoint_parts.EndpointFingerprint, inputs.endpoint_fingerprints),
        token_agreement=_parts(endpoint_parts.TokenAgreement, inputs.token_agreement),
        prefix_cache=[
            endpoint_parts.PrefixCacheHits(**row, prefix_reuse_share=inputs.profile.get("prefix_block_reuse_share"))
            for row in inputs.prefix_cache_hits
        ],
        server_timings=_parts(endpoint_parts.ServerTimings, inputs.server_timings),
        server_ttft=_parts(endpoint_parts.ServerTtft, inputs.server_ttft),
        cold_cache=_part(
            endpoint_parts.ColdCacheNote,
            cold_cache_note(inputs.profile, spec.workload.replay.warm_prefixes, inputs.warm_up_requests),
        ),
        server_levels=_parts(endpoint_parts.ServerLoadLevel, inputs.server_levels),
        gpu_energy=_parts(endpoint_parts.GpuEnergy, inputs.gpu_energy),
        glossary=_parts(GlossaryEntry, catalogue.glossary()),
    )


def _figures(inputs: PackInputs) -> tuple[list[dict], list[dict], dict | None, list[dict] | None]:
    """Every figure (read from `data/figures.parquet`: analysis made them) with its lineage, the
    input files the pack names, the sweep's lineage and the `capacity` rows (both None when no sweep
    ran). A figure names the query it was read from; its lineage is that query's copy in the pack,
    the queries it read first and the input files, each with its sha256."""
    layout, spec = inputs.layout, inputs.loaded.spec
    raw_ref = file_ref(layout.path(RAW_TIMINGS), layout.root, inputs.raw_timings_rows)
    bins, staged, latency_sql, throughput_sql, cost_sql = (
        file_ref(path, layout.root)
        for path in layout.copy_sql(
            ["steady_bins", "steady_requests", "latency_percentiles", "throughput", "cost_per_decision"]
        )
    )
    latency_steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(LATENCY_STEPS))]
    throughput_steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(THROUGHPUT_STEPS))]
    lineages = {
        "latency_percentiles": lineage(
            [bins, staged, *latency_steps, latency_sql], [raw_ref] + _itl_histogram_ref(inputs)
        ),
        "throughput": lineage([bins, staged, *throughput_steps, throughput_sql], [raw_ref]),
        "cost_per_decision": lineage([bins, staged, cost_sql], [raw_ref]),
    }
    input_refs = [raw_ref]
    if inputs.accuracy_rows:
        (accuracy_sql,) = (file_ref(path, layout.root) for path in layout.copy_sql(["accuracy_summary"]))
        results_ref = file_ref(layout.path(ACCURACY_RESULTS), layout.root, inputs.accuracy_results_rows)
        lineages["accuracy_summary"] = lineage([accuracy_sql], [results_ref])
        input_refs.append(results_ref)
    sweep_lineage, capacity = None, None
    if sweep_ran(spec):
        sweep_lineage, sweep_inputs = pack_sweep.sweep_lineage(
            layout, inputs.raw_timings_rows, inputs.sweep.timings_rows
        )
        input_refs.append(sweep_inputs[-1])
        capacity = capacity_section(spec, inputs.sweep.capacity_rows, sweep_lineage)
    # the sweep's cost figure says why it has no value when no sweep ran: it read the headline's cost
    lineages["sweep_summary"] = sweep_lineage or lineages["cost_per_decision"]
    if inputs.arm_figure_rows:
        lineages[ARM_QUERY] = pack_arms.arm_lineage(layout, inputs.arm_timings_rows)
    figures = [
        {**{key: value for key, value in figure.items() if key != "query"}, "lineage": lineages[figure["query"]]}
        for figure in inputs.figures
    ]
    return figures, input_refs, sweep_lineage, capacity


def _arm_sections(inputs: PackInputs, figures: list[dict], sweep_lineage: dict | None) -> dict:
    """`vendor_conditions` and `headline_waterfall` (pack/assemble/arms.py); empty without arms."""
    spec, rows = inputs.loaded.spec, inputs.arm_figure_rows
    lineage = pack_arms.arm_lineage(inputs.layout, inputs.arm_timings_rows) if rows else None
    return {
        "arm_lineage": lineage,
        "vendor_conditions": pack_arms.vendor_conditions_section(spec, rows, figures, lineage) if lineage else [],
        "headline_waterfall": pack_arms.headline_waterfall(
            spec, rows, figures, inputs.sweep.level_rows, inputs.sweep.summary_rows, lineage, sweep_lineage
        ),
    }


def _parts(part: type[P], values: list[dict]) -> list[P]:
    """Plain dicts (claims, comparison, table rows) validated into the pack's parts."""
    return [part.model_validate(value) for value in values]


def _part(part: type[P], value: dict | None) -> P | None:
    return None if value is None else part.model_validate(value)


def _optional_parts(part: type[P], values: list[dict] | None) -> list[P] | None:
    return None if values is None else _parts(part, values)


def _itl_histogram_ref(inputs: PackInputs) -> list[dict]:
    """The ITL histogram the latency figures read (written beside raw_timings), when there is one."""
    if inputs.itl_histogram_rows is None:
        return []
    layout = inputs.layout
    return [file_ref(layout.path(ITL_HISTOGRAM), layout.root, inputs.itl_histogram_rows)]


def client_validity(lag_p99: float | None, calibration: dict | None) -> endpoint_parts.ClientValidity:
    """Client-limited when the replay itself ran late, or when the client could not keep the
    plan's peak schedule even against the zero-delay echo endpoint."""
    replay_late = lag_p99 is not None and lag_p99 > CLIENT_LIMITED_LAG_MS
    return endpoint_parts.ClientValidity(
        schedule_lag_ms_p99=lag_p99,
        client_limited=replay_late or bool(calibration and calibration["client_limited"]),
        threshold_ms=CLIENT_LIMITED_LAG_MS,
        calibration=_part(endpoint_parts.ClientCalibration, calibration),
    )


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def code_version() -> str:
    """The checkout's git commit (with '+dirty' for uncommitted changes), or 'unknown'."""
    import subprocess

    from pipeline import REPO_ROOT

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def run_lineage(
    run_id: str,
    asset_keys: list[str],
    partition_runs: list[PartitionRun] | None = None,
    plan_run_id: str | None = None,
) -> RunLineage:
    """The run-level part of the lineage appendix: which run and assets, which code (and, for the
    side-by-side pack, each partition's run and the run that planned the replay they share)."""
    lineage = RunLineage(run_id=run_id, asset_keys=sorted(asset_keys), code_version=code_version())
    if partition_runs is not None:
        lineage.partition_runs = partition_runs
    if plan_run_id is not None:
        lineage.plan_run_id = plan_run_id
    return lineage
