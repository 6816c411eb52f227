"""Raw timings → decision tables, each computed by one DuckDB query in sql/."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from pipeline.spec import Spec
from pipeline.sqlrun import run_query
from pipeline.stats import Z_95

STAGED = ("steady_requests",)


def analysis_params(spec: Spec) -> dict:
    replay = spec.workload.replay
    return {
        "warmup_s": replay.warmup_s,
        "cooldown_s": replay.cooldown_s,
        "sla_ttft_ms": spec.sla.ttft_ms,
        "sla_tpot_ms": spec.sla.tpot_ms,
        "sla_e2e_ms": spec.sla.e2e_ms,
        "z": Z_95,
    }


def latency_percentiles(raw_timings: Path, spec: Spec) -> pa.Table:
    return run_query("latency_percentiles", {"raw_timings": raw_timings}, analysis_params(spec), STAGED)


def throughput(raw_timings: Path, spec: Spec) -> pa.Table:
    return run_query("throughput", {"raw_timings": raw_timings}, analysis_params(spec), STAGED)


def prices_table(spec: Spec) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "candidate": c.name,
                "usd_per_hour": c.price.usd_per_hour,
                "replicas": c.price.replicas,
                "usd_per_million_input_tokens": c.price.usd_per_million_input_tokens,
                "usd_per_million_output_tokens": c.price.usd_per_million_output_tokens,
            }
            for c in spec.candidates
        ],
        schema=pa.schema(
            [
                ("candidate", pa.string()),
                ("usd_per_hour", pa.float64()),
                ("replicas", pa.int64()),
                ("usd_per_million_input_tokens", pa.float64()),
                ("usd_per_million_output_tokens", pa.float64()),
            ]
        ),
    )


def cost_per_decision(raw_timings: Path, spec: Spec) -> pa.Table:
    views = {"raw_timings": raw_timings, "prices": prices_table(spec)}
    return run_query("cost_per_decision", views, analysis_params(spec), STAGED)
