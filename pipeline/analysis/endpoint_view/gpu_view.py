"""GPU telemetry beside the load (issue 18 item 2): utilisation, power and energy per output token.

Why: a vendor's throughput claim on its hardware says nothing of what a token costs in energy; a
candidate that exposes NVIDIA's DCGM exporter (`gpu_metrics_url` on the candidate) is scraped
beside the replay like its /metrics (pipeline/replay/endpoint/server_metrics.py, `endpoint` 'gpu'), and
the pack divides the mean power over the steady window by the output tokens per second over the
same window (the throughput figure): joules per output token. The mean power comes from the
exporter's energy counter (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ since boot: its increase over
the time between the window's first and last scrape), or, where the exporter has no counter,
the mean of its power gauge (DCGM_FI_DEV_POWER_USAGE, W), both summed over the GPUs it reports.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from pipeline.analysis.tabulate.repeats import first_run
from pipeline.contracts import RAW_TIMINGS, SERVER_METRICS
from pipeline.duck.session import QuerySession
from pipeline.files.layout import PackLayout


def gpu_energy(
    server_metrics: Path | pa.Table,
    raw_timings: Path | pa.Table,
    warmup_s: float,
    cooldown_s: float,
    throughput_rows: list[dict],
) -> list[dict]:
    """Per candidate with GPU samples in its steady window: GPUs, utilisation (%), mean power (W)
    and its source, and joules per output token (None without an output-token rate)."""
    views = {SERVER_METRICS.name: server_metrics, RAW_TIMINGS.name: raw_timings}
    with QuerySession(views, {"warmup_s": warmup_s, "cooldown_s": cooldown_s}) as session:
        rows = session.run("server_metrics_gpu").to_pylist()
    rates = {row["candidate"]: row.get("output_tokens_per_s") for row in throughput_rows}
    for row in rows:
        rate, power = rates.get(row["candidate"]), row["mean_power_w"]
        row["output_tokens_per_s"] = rate
        row["joules_per_output_token"] = power / rate if power is not None and rate else None
    return rows


def read_gpu_energy(layout: PackLayout, warmup_s: float, cooldown_s: float, throughput_rows: list[dict]) -> list[dict]:
    """The pack's GPU rows; none without server metrics (or without a GPU exporter's samples)."""
    metrics = layout.path(SERVER_METRICS)
    if not metrics.is_file():
        return []
    return gpu_energy(metrics, first_run(layout.path(RAW_TIMINGS)), warmup_s, cooldown_s, throughput_rows)
