"""Assemble the evidence-pack model from the analysis tables (DESIGN.md's fixed JSON keys)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata

import pyarrow.parquet as pq

from pipeline.pack import claims, comparison
from pipeline.pack import sweep as pack_sweep
from pipeline.pack.hashing import file_ref
from pipeline.pack.layout import PackLayout
from pipeline.replay.calibration import CLIENT_LIMITED_LAG_MS
from pipeline.spec import LoadedSpec

# the queries a table's figures read before its own (pipeline/analysis/tables.py runs them in this order)
LATENCY_STEPS = ("steady_windows", "itl_histogram", "latency_samples", "latency_histogram", "latency_counts")
THROUGHPUT_STEPS = ("throughput_buckets", "concurrency_events")
PACKAGES = ("loadproof", "dagster", "duckdb", "pyarrow", "httpx", "pydantic")


def conditions(loaded: LoadedSpec, profile: dict, peak_concurrency: int | None) -> list[dict]:
    """The benchmark's frozen assumptions beside what the production sample shows, axis by axis."""
    claimed = loaded.spec.claim.conditions
    return [
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
                next(iter(profile.get("dispersion") or [{}])).get("index_of_dispersion"),
                profile.get("peak_to_mean_ratio"),
            ),
        },
        {
            "axis": "long-context / structured-output / multi-turn share",
            "claimed": None,
            "production": _shares(profile, ("long_context", "structured_output", "multi_turn")),
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
        {"axis": "hardware", "claimed": claimed.hardware, "production": loaded.spec.workload.production.hardware},
        {"axis": "dataset", "claimed": claimed.dataset, "production": "production sample"},
    ]


def _pair(first: float | None, second: float | None) -> str | None:
    if first is None and second is None:
        return None
    return " / ".join("—" if v is None else f"{v:.3g}" for v in (first, second))


def _shares(profile: dict, keys: tuple[str, ...]) -> str:
    return " / ".join("—" if profile.get(f"share_{k}") is None else f"{profile[f'share_{k}']:.0%}" for k in keys)


def _itl_histogram_ref(layout: PackLayout) -> list[dict]:
    """The ITL histogram the latency figures read (written beside raw_timings), when there is one."""
    path = layout.table("itl_histogram")
    if not path.is_file():
        return []
    return [file_ref(path, layout.root, pq.read_metadata(path).num_rows)]


def _sessions(profile: dict) -> str | None:
    if not profile.get("sessions"):
        return None
    share, turns, think = (
        profile.get(k) for k in ("share_requests_in_sessions", "session_turns_p50", "session_think_time_s_p50")
    )
    return " / ".join("—" if v is None else f"{v:.3g}" for v in (share, turns, think))


def _claim_divergence(layout: PackLayout) -> dict:
    """prompt_profile's claim divergence (axes + proxy verdict), when it ran."""
    path = layout.json("claim_divergence")
    return json.loads(path.read_text()) if path.is_file() else {"axes": [], "proxy_verdict": None}


def build_pack(
    *,
    loaded: LoadedSpec,
    run_id: str,
    layout: PackLayout,
    profile: dict,
    replay_summary: dict,
    latency_rows: list[dict],
    throughput_rows: list[dict],
    cost_rows: list[dict],
    raw_timings_rows: int,
    accuracy_rows: Sequence[dict] = (),
    accuracy_label_rows: Sequence[dict] = (),
    error_rows: Sequence[dict] = (),
    accuracy_results_rows: int | None = None,
    calibration: dict | None = None,
    sweep_level_rows: Sequence[dict] = (),
    sweep_summary_rows: Sequence[dict] = (),
    sweep_replay: dict | None = None,
    sweep_timings_rows: int = 0,
) -> dict:
    raw_ref = file_ref(layout.table("raw_timings"), layout.root, raw_timings_rows)
    staged, latency_sql, throughput_sql, cost_sql = (
        file_ref(path, layout.root)
        for path in layout.copy_sql(["steady_requests", "latency_percentiles", "throughput", "cost_per_decision"])
    )
    latency_steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(LATENCY_STEPS))]
    throughput_steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(THROUGHPUT_STEPS))]
    latency_inputs = [raw_ref] + _itl_histogram_ref(layout)
    figures = (
        claims.latency_figures(
            loaded.spec, latency_rows, claims.lineage([staged, *latency_steps, latency_sql], latency_inputs)
        )
        + claims.throughput_figures(
            loaded.spec, throughput_rows, claims.lineage([staged, *throughput_steps, throughput_sql], [raw_ref])
        )
        + claims.cost_figures(loaded.spec, cost_rows, claims.lineage([staged, cost_sql], [raw_ref]))
    )
    inputs = [raw_ref]
    if accuracy_rows:
        (accuracy_sql,) = (file_ref(path, layout.root) for path in layout.copy_sql(["accuracy_summary"]))
        results_ref = file_ref(layout.table("accuracy_results"), layout.root, accuracy_results_rows)
        figures += claims.accuracy_figures(
            loaded.spec, list(accuracy_rows), claims.lineage([accuracy_sql], [results_ref])
        )
        inputs.append(results_ref)
    sweep_lineage = None
    if pack_sweep.sweep_ran(loaded.spec):
        sweep_lineage, sweep_inputs = pack_sweep.sweep_lineage(layout, raw_timings_rows, sweep_timings_rows)
        inputs.append(sweep_inputs[-1])
    figures += claims.sweep_figures(
        loaded.spec, list(sweep_summary_rows), sweep_lineage or claims.lineage([staged, cost_sql], [raw_ref])
    )
    divergence = _claim_divergence(layout)
    lag_p99 = max((row["schedule_lag_ms_p99"] or 0.0 for row in throughput_rows), default=None)
    return {
        "run_id": run_id,
        "spec_sha256": loaded.sha256,
        "spec_name": loaded.spec.name,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "claim": {"source": loaded.spec.claim.source, "figures": dict(loaded.spec.claim.figures)},
        "figures": figures,
        "conditions": conditions(
            loaded,
            profile,
            max((row.get("peak_concurrency") or 0 for row in throughput_rows), default=None)
            or replay_summary.get("peak_in_flight"),
        ),
        "proxy_verdict": divergence["proxy_verdict"],
        "claim_divergence": divergence["axes"],
        "profile": profile,
        "replay": replay_summary,
        "client_validity": client_validity(lag_p99, calibration),
        "inputs": inputs,
        "side_by_side": comparison.side_by_side(figures),
        "ranking": comparison.ranking(cost_rows, throughput_rows, list(accuracy_rows)),
        "accuracy": comparison.accuracy_section(list(accuracy_rows), list(accuracy_label_rows)),
        "latency_by_bucket": comparison.latency_by_bucket(latency_rows),
        "errors_by_type": comparison.errors_by_type(list(error_rows)),
        "concurrency": [
            {"candidate": row["candidate"], "peak": row.get("peak_concurrency"), "mean": row.get("mean_concurrency")}
            for row in throughput_rows
        ],
        "sweep": pack_sweep.sweep_section(
            loaded.spec, list(sweep_level_rows), list(sweep_summary_rows), sweep_replay, sweep_lineage
        ),
        "versions": {name: _version(name) for name in PACKAGES},
    }


def client_validity(lag_p99: float | None, calibration: dict | None) -> dict:
    """Client-limited when the replay itself ran late, or when the client could not keep the
    plan's peak schedule even against the zero-delay echo endpoint."""
    replay_late = lag_p99 is not None and lag_p99 > CLIENT_LIMITED_LAG_MS
    return {
        "schedule_lag_ms_p99": lag_p99,
        "client_limited": replay_late or bool(calibration and calibration["client_limited"]),
        "threshold_ms": CLIENT_LIMITED_LAG_MS,
        "calibration": calibration,
    }


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


def run_lineage(run_id: str, asset_keys: list[str]) -> dict:
    """The run-level part of the lineage appendix: which run and assets, which code."""
    return {"run_id": run_id, "asset_keys": sorted(asset_keys), "code_version": code_version()}
