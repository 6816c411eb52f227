"""Assemble the evidence-pack model from the analysis tables (DESIGN.md's fixed JSON keys)."""

from __future__ import annotations

from datetime import datetime, timezone
from importlib import metadata

from pipeline.hashing import file_ref
from pipeline.layout import PackLayout
from pipeline.pack import comparison
from pipeline.pack import figures as pack_figures
from pipeline.spec import LoadedSpec

# the queries a table's figures read before its own (pipeline/analysis.py runs them in this order)
LATENCY_STEPS = ("itl_volume", "latency_samples", "itl_samples", "latency_histogram", "latency_counts")
THROUGHPUT_STEPS = ("throughput_buckets", "concurrency_events")
CLIENT_LIMITED_LAG_MS = 10.0  # schedule lag p99 above this: the client, not the endpoint, set the pace
PACKAGES = ("loadproof", "dagster", "duckdb", "pyarrow", "httpx", "pydantic")


def conditions(loaded: LoadedSpec, profile: dict, peak_concurrency: int | None) -> list[dict]:
    """The benchmark's frozen assumptions beside what the production sample shows, axis by axis."""
    claimed = loaded.spec.claim.conditions
    return [
        {"axis": "input tokens (claim) / prompt tokens p50 (production)", "claimed": claimed.input_tokens, "production": profile["prompt_tokens_p50"]},
        {"axis": "prompt tokens p99", "claimed": claimed.input_tokens, "production": profile["prompt_tokens_p99"]},
        {"axis": "output tokens (claim) / p50 (production)", "claimed": claimed.output_tokens, "production": profile["output_tokens_p50"]},
        {"axis": "output tokens p99", "claimed": claimed.output_tokens, "production": profile["output_tokens_p99"]},
        {"axis": "concurrency / batch size (peak in flight during replay)", "claimed": claimed.concurrency, "production": peak_concurrency},
        {"axis": "arrival rate (requests/s)", "claimed": None, "production": profile["arrival_rate_per_s"]},
        {"axis": "inter-arrival coefficient of variation", "claimed": None, "production": profile["interarrival_cv"]},
        {"axis": "precision", "claimed": claimed.precision, "production": None},
        {"axis": "hardware", "claimed": claimed.hardware, "production": None},
        {"axis": "dataset", "claimed": claimed.dataset, "production": "production sample"},
    ]


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
    accuracy_rows: list[dict] = (),
    accuracy_label_rows: list[dict] = (),
    error_rows: list[dict] = (),
    accuracy_results_rows: int | None = None,
) -> dict:
    raw_ref = file_ref(layout.table("raw_timings"), layout.root, raw_timings_rows)
    staged, latency_sql, throughput_sql, cost_sql = (
        file_ref(path, layout.root)
        for path in layout.copy_sql(["steady_requests", "latency_percentiles", "throughput", "cost_per_decision"])
    )
    latency_steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(LATENCY_STEPS))]
    throughput_steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(THROUGHPUT_STEPS))]
    figures = (
        pack_figures.latency_figures(loaded.spec, latency_rows, pack_figures.lineage([staged, *latency_steps, latency_sql], [raw_ref]))
        + pack_figures.throughput_figures(loaded.spec, throughput_rows, pack_figures.lineage([staged, *throughput_steps, throughput_sql], [raw_ref]))
        + pack_figures.cost_figures(loaded.spec, cost_rows, pack_figures.lineage([staged, cost_sql], [raw_ref]))
    )
    inputs = [raw_ref]
    if accuracy_rows:
        (accuracy_sql,) = (file_ref(path, layout.root) for path in layout.copy_sql(["accuracy_summary"]))
        results_ref = file_ref(layout.table("accuracy_results"), layout.root, accuracy_results_rows)
        figures += pack_figures.accuracy_figures(loaded.spec, accuracy_rows, pack_figures.lineage([accuracy_sql], [results_ref]))
        inputs.append(results_ref)
    lag_p99 = max((row["schedule_lag_ms_p99"] or 0.0 for row in throughput_rows), default=None)
    return {
        "run_id": run_id,
        "spec_sha256": loaded.sha256,
        "spec_name": loaded.spec.name,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "claim": {"source": loaded.spec.claim.source, "figures": dict(loaded.spec.claim.figures)},
        "figures": figures,
        "conditions": conditions(
            loaded, profile,
            max((row.get("peak_concurrency") or 0 for row in throughput_rows), default=None) or replay_summary.get("peak_in_flight"),
        ),
        "profile": profile,
        "replay": replay_summary,
        "client_validity": {
            "schedule_lag_ms_p99": lag_p99,
            "client_limited": lag_p99 is not None and lag_p99 > CLIENT_LIMITED_LAG_MS,
            "threshold_ms": CLIENT_LIMITED_LAG_MS,
        },
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
        "versions": {name: _version(name) for name in PACKAGES},
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
