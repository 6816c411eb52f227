"""What BR0.2 requires of a latency statistic and the pack's tables do not hold: its mean (and min,
max), over exactly the requests the pack's latency figures were read from.

The pack keeps percentiles (nearest rank, with intervals), never a mean; BR0.2's `Statistics`
requires one. Rather than leave every latency block out, the mean is taken over the same rows the
figures and the pack's latency charts read: `pipeline.analysis.tabulate.tables.steady_requests` (the stage's
steady window, successful production requests), with the stage's own window (a sweep level's
`level_spec`, an arm's `window_spec` with the warm-up and cool-down `data/arm_figures.parquet`
records). A mean is kept only where its count equals the figure's `n`, so it describes the very
population the percentiles describe; otherwise that metric's statistic is left out (a sweep level's
table keeps TTFT's `n` only; its TPOT and E2E are read from the same rows by the same filter). ITL's comes from
`data/itl_histogram.parquet` (every steady-window gap counted per whole microsecond, as the ITL
percentiles are read), for the production load only: the sweep and arm timings keep no gap lists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.analysis.judge.arms import window_spec
from pipeline.analysis.sizing.sweep import level_sources, level_spec
from pipeline.analysis.tabulate.tables import steady_requests
from pipeline.contracts import ARM_TIMINGS, ITL_HISTOGRAM, RAW_TIMINGS, SWEEP_TIMINGS
from pipeline.spec import Spec

REQUEST_METRICS = ("ttft_ms", "tpot_ms", "e2e_ms")
# loadproof's latency metric → BR's latency field and unit (TPOT and ITL are per output token)
LATENCY = {
    "ttft_ms": ("time_to_first_token", "ms"),
    "tpot_ms": ("time_per_output_token", "ms/token"),
    "itl_ms": ("inter_token_latency", "ms/token"),
    "e2e_ms": ("request_latency", "ms"),
}
# the pack's percentile suffix → BR's key; BR's p0p1, p1, p5, p10, p25 and p75 the pack never reads
PERCENTILES = {"p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "p999": "p99p9"}
_PERCENTILE_FIGURE = re.compile(r"^(?P<metric>ttft_ms|tpot_ms|itl_ms|e2e_ms)_(?P<p>p50|p90|p95|p99|p999)$")


def moments(rows: pa.Table) -> dict[str, dict]:
    """Per metric of the steady window's successful requests: n, mean, min, max."""
    kept = rows.filter(pc.field("in_steady_window") & (pc.field("status") == "ok"))
    out = {}
    for metric in REQUEST_METRICS:
        if metric not in kept.schema.names:
            continue
        values = pc.drop_null(kept.column(metric))
        if len(values) == 0:
            continue
        bounds = pc.min_max(values)
        out[metric] = {
            "n": len(values),
            "mean": pc.mean(values).as_py(),
            "min": bounds["min"].as_py(),
            "max": bounds["max"].as_py(),
        }
    return out


def production_moments(folder: Path, spec: Spec, candidate: str) -> dict[str, dict]:
    """The production load's latency moments, ITL's from the gap histogram."""
    path = folder / RAW_TIMINGS.path
    if not path.is_file():
        return {}
    out = moments(steady_requests(_of(pq.read_table(path), candidate), spec))
    itl = _itl_moments(folder / ITL_HISTOGRAM.path, candidate)
    return out | ({"itl_ms": itl} if itl else {})


def level_moments(folder: Path, spec: Spec, candidate: str) -> dict[float, dict[str, dict]]:
    """Per further sweep level (its value): the latency moments over that level's steady window."""
    raw, sweep = folder / RAW_TIMINGS.path, folder / SWEEP_TIMINGS.path
    if not raw.is_file() or not sweep.is_file():
        return {}
    sweep_rows = _of(pq.read_table(sweep), candidate)
    if sweep_rows.num_rows == 0:
        return {}
    return {
        level.value: moments(steady_requests(source, level_spec(spec, level)))
        for level, source in level_sources(raw, sweep_rows, spec)
        if not level.production
    }


def arm_moments(
    folder: Path, spec: Spec, candidate: str, arm: str, window: tuple[float, float] | None
) -> dict[str, dict]:
    """One arm's latency moments over the steady window its figures were read in (none without one)."""
    path = folder / ARM_TIMINGS.path
    if window is None or not path.is_file():
        return {}
    table = _of(pq.read_table(path), candidate)
    table = table.filter(pc.equal(table.column("arm"), arm))
    return moments(steady_requests(table, window_spec(spec, *window))) if table.num_rows else {}


def _itl_moments(path: Path, candidate: str) -> dict | None:
    if not path.is_file():
        return None
    table = pq.read_table(path, columns=["candidate", "in_steady_window", "gap_us", "gaps"])
    table = _of(table, candidate).filter(pc.field("in_steady_window"))
    gaps = pc.sum(table.column("gaps")).as_py() or 0
    if gaps == 0:
        return None
    total_us = pc.sum(pc.multiply(table.column("gap_us"), table.column("gaps"))).as_py()
    bounds = pc.min_max(table.column("gap_us"))
    return {
        "n": gaps,
        "mean": total_us / gaps / 1000.0,
        "min": bounds["min"].as_py() / 1000.0,
        "max": bounds["max"].as_py() / 1000.0,
    }


def _of(table: pa.Table, candidate: str) -> pa.Table:
    return table.filter(pc.equal(table.column("candidate"), candidate))


def latency_block(percentiles: dict[str, dict], moments: dict[str, dict]) -> dict:
    """BR's latency statistics: only where the mean BR requires is known, over the figures' own n."""
    out = {}
    for metric, (name, units) in LATENCY.items():
        measured = moments.get(metric)
        known = percentiles.get(metric, {})
        if measured is None or ("n" in known and known["n"] != measured["n"]):
            continue  # no mean over the very requests the percentiles were read from: left out
        out[name] = {
            "units": units,
            "mean": measured["mean"],
            "min": measured["min"],
            **{PERCENTILES[p]: known[p] for p in PERCENTILES if known.get(p) is not None},
            "max": measured["max"],
        }
    return out


def percentiles_of_figures(rows: list[dict]) -> dict[str, dict]:
    """{metric: {suffix: value, "n": n}} from figure rows named `<metric>_<pNN>`."""
    out: dict[str, dict] = {}
    for row in rows:
        match = _PERCENTILE_FIGURE.match(row["metric"])
        if match and row["measured"] is not None:
            entry = out.setdefault(match["metric"], {})
            entry[match["p"]] = row["measured"]
            entry["n"] = row["n"]
    return out


def percentiles_of_level(row: dict) -> dict[str, dict]:
    """From a `data/sweep_levels.parquet` row: its TTFT/TPOT/E2E percentile columns; `latency_n` is
    TTFT's n (the only one the table keeps)."""
    out: dict[str, dict] = {}
    for name, value in row.items():
        match = _PERCENTILE_FIGURE.match(name)
        if match and value is not None:
            out.setdefault(match["metric"], {})[match["p"]] = value
    if "ttft_ms" in out and row.get("latency_n") is not None:
        out["ttft_ms"]["n"] = row["latency_n"]
    return out
