"""The smallest pack-document pieces the pages render: one claimed figure's row and a document
around a list of them (the keys every template reads), for tests of what the pages show."""

from __future__ import annotations


def figure_row(**extra) -> dict:
    return {
        "candidate": "c",
        "metric": "ttft_ms_p95",
        "unit": "ms",
        "basis": "production_load",
        "claimed": 250.0,
        "measured": 260.0,
        "ci_low": 255.0,
        "ci_high": 270.0,
        "n": 400,
        "verdict": "holds within tolerance",
        "tolerance": 0.1,
        "tolerance_source": "claim.tolerance.latency, default: Little's law",
        "lineage": {
            "sql": "sql/latency_percentiles.sql",
            "sql_sha256": "0" * 64,
            "staged_sql": [],
            "inputs": [{"path": "data/raw.parquet", "sha256": "0" * 64, "rows": 400}],
        },
        **extra,
    }


def document(figures: list[dict]) -> dict:
    """The smallest pack document the pages render (the keys every template reads)."""
    return {
        "run_id": "run-1",
        "spec_sha256": "0" * 64,
        "spec_name": "tolerances",
        "generated_at": "2026-12-02T00:00:00+00:00",
        "claim": {"source": "datasheet", "figures": {"ttft_ms_p95": 250.0, "output_tokens_per_s": 4200.0}},
        "figures": figures,
        "conditions": [],
        "profile": {"requests": 10},
        "replay": {"mode": "trace", "planned": 1, "sent": 1, "errors": 0, "unsent": 0, "wall_s": 1.0},
        "client_validity": {"schedule_lag_ms_p99": 0.5, "client_limited": False, "threshold_ms": 10.0},
        "proxy_verdict": {"verdict": "must be re-measured", "reasons": []},
        "claim_divergence": [],
        "data_quality": [],
        "inputs": [],
        "versions": {"loadproof": "0.1.0"},
        "lineage": {"run_id": "run-1", "asset_keys": [], "code_version": "abc"},
        "manifest": [],
    }
