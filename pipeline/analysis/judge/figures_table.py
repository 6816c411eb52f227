"""`data/figures.parquet`: every figure of a partition in one checked table, the only place the
pack reads a figure from.

One row per figure (candidate × metric × basis; `arm` names the arm a vendor-conditions figure was
measured in, `load_level` the level a capacity figure was read at) with the claim, the measured
value, its interval, n, interval method, design effect and verdict, the notes that qualify it, and
its lineage: the `sql/` query it was read from and the input files' paths and sha256 as analysed.
A repeated replay adds one row per run of each combined figure (`repeat` = the run; the combined
row has `repeat` NULL and the spread between runs). `partition_figures` makes the rows,
`figures_table` writes them, `figures_from_table` gives the pack back the figures it shows;
`loadproof verify` re-computes the table with `partition_figures` and names any row that differs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.analysis.declare.catalogue import PRODUCTION_LOAD
from pipeline.analysis.judge import figures as made
from pipeline.analysis.judge.decisive import with_resolution
from pipeline.analysis.judge.how_far import with_how_far
from pipeline.analysis.judge.instrument_error import judged_with_instrument_error, rejudged
from pipeline.analysis.judge.repeated_figures import RUN_KEYS, with_repeats
from pipeline.analysis.judge.unjudged_claims import unjudged_claims
from pipeline.contracts import (
    ACCURACY_RESULTS,
    ACCURACY_SUMMARY,
    ARM_FIGURES,
    ARM_TIMINGS,
    CAPACITY,
    COST_PER_DECISION,
    FIGURES,
    FIGURES_SCHEMA,
    ITL_HISTOGRAM,
    LATENCY_PERCENTILES,
    RAW_TIMINGS,
    REPLAY_SUMMARY,
    SWEEP_SUMMARY,
    SWEEP_TIMINGS,
    THROUGHPUT,
    PackFile,
)
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.files.hashing import sha256_file
from pipeline.spec import Spec

RELATIVE_TOLERANCE = 1e-9
# the columns a figure's value is: what `loadproof verify` re-computes and compares
VALUE_COLUMNS = (
    "claimed",
    "measured",
    "ci_low",
    "ci_high",
    "n",
    "verdict",
    "decision_rule",
    "tolerance",
    "tolerance_source",
    "interval_method",
    "design_effect",
    "requests_to_resolve",
    "minutes_to_resolve",
    "to_resolve",
    "times_claimed",
    "percent_from_claim",
    "instrument_error_ms",
    "instrument_error_source",
)
ROW_KEY = ("candidate", "metric", "basis", "repeat")
# keys a figure has only when they say something (pack/document/parts.py Figure: absent, not null)
_ONLY_WHEN_SET = (
    "early_stopping",
    "interval_method",
    "load_level",
    "load_level_label",
    "not_judged",
    "no_steady_window",
    "decision_rule",
    "reason",
    "timed_from",
    "sampled",
    "tolerance",
    "tolerance_source",
    "setting_to_judge",
    "requests_to_resolve",
    "minutes_to_resolve",
    "to_resolve",
    "times_claimed",
    "percent_from_claim",
    "instrument_error_ms",
    "instrument_error_source",
)
# the files each query's figures are read from, for their lineage
TABLE_FILES = (LATENCY_PERCENTILES, THROUGHPUT, COST_PER_DECISION, ACCURACY_SUMMARY, SWEEP_SUMMARY)
INPUTS_BY_QUERY: dict[str, tuple[PackFile, ...]] = {
    "latency_percentiles": (RAW_TIMINGS, ITL_HISTOGRAM),
    "throughput": (RAW_TIMINGS,),
    "cost_per_decision": (RAW_TIMINGS, ACCURACY_RESULTS),  # a useful decision is correct where scored
    "accuracy_summary": (ACCURACY_RESULTS,),
    "sweep_summary": (RAW_TIMINGS, SWEEP_TIMINGS, ACCURACY_RESULTS),
    made.ARM_QUERY: (ARM_TIMINGS,),
}


def partition_figures(
    spec: Spec,
    tables: dict[str, list[dict]],
    raw_timings: Path | pa.Table,
    capacity: list[dict] | None = None,
    arm_rows: list[dict] | None = None,
    queries: QueryCatalog = REPO_QUERIES,
    served_demand: bool = True,
    replay_summary: dict | None = None,
) -> list[dict]:
    """Every figure from the analysis tables (`tables`: latency_percentiles, throughput,
    cost_per_decision, accuracy_summary, sweep_summary, as rows), a repeated replay's combined over
    its runs (each run re-analysed from `raw_timings`), the capacity's from its rows
    (`analysis.capacity.capacity_rows`: none without a sweep), and the vendor-conditions arm's.
    With the `replay_summary` the production-load latency figures carry the instrument error and
    are judged with it (`analysis.instrument_error`; None: a pack written before it, judged as it was)."""
    accuracy = tables.get("accuracy_summary") or []
    summary = tables.get("sweep_summary") or []
    figures = made.headline_figures(spec, tables, served_demand)
    figures += made.capacity_figures(spec, capacity or [])
    figures += made.sweep_figures(spec, summary)
    accuracy_table = pa.Table.from_pylist(accuracy) if accuracy else None
    figures = with_repeats(figures, spec, raw_timings, accuracy_table, queries)  # unchanged for one run
    if replay_summary is not None:
        figures = judged_with_instrument_error(spec, figures, raw_timings, replay_summary, queries)
    figures += judged_vendor_figures(spec, arm_rows or [])
    figures += unjudged_claims(spec, figures)  # every claim accounted for
    # each inconclusive claimed figure with what would resolve it
    throughput = tables.get("throughput") or []
    resolved = with_resolution(figures, spec.analysis.confidence, throughput, arm_rows, spec.analysis.interval_batches)
    return with_how_far(resolved)  # each judged figure: how far from its claim


def judged_vendor_figures(spec: Spec, arm_rows: list[dict]) -> list[dict]:
    """The vendor-conditions arm's claimed figures (`arm_figures` rows), each judged with the
    instrument error its arm carries (`instrument_error.rejudged`)."""
    vendor = made.vendor_conditions_figures(spec, made.vendor_conditions_rows(spec, arm_rows))
    return [rejudged({**item, "arm": made.VENDOR_CONDITIONS_ARM}) for item in vendor]


def figures_of_folder(root: Path, spec: Spec) -> pa.Table:
    """`data/figures.parquet` of the partition folder `root`, from the analysis tables written there
    (the `figures` asset; `loadproof verify` re-computes the tables from the raw timings first)."""
    tables = {file.name: _rows(root / file.path) for file in TABLE_FILES}
    capacity, arm_rows = _rows(root / CAPACITY.path), _rows(root / ARM_FIGURES.path)  # the capacity asset's rows
    summary = root / REPLAY_SUMMARY.path
    replay_summary = json.loads(summary.read_text()) if summary.is_file() else {}
    figures = partition_figures(
        spec, tables, root / RAW_TIMINGS.path, capacity, arm_rows, replay_summary=replay_summary
    )
    return figures_table(figures, input_hashes(root))


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist() if path.is_file() else []


def input_hashes(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Per query, the (path, sha256) of each input file present under the partition folder `root`."""
    hashes: dict[str, str] = {}
    out = {}
    for query, files in INPUTS_BY_QUERY.items():
        present = [file for file in files if (root / file.path).is_file()]
        for file in present:
            if file.path not in hashes:
                hashes[file.path] = sha256_file(root / file.path)
        out[query] = [(file.path, hashes[file.path]) for file in present]
    return out


def figures_table(figures: list[dict], inputs: dict[str, list[tuple[str, str]]] | None = None) -> pa.Table:
    """The rows of `data/figures.parquet`: each figure, then a row per run of a repeated one."""
    rows = []
    for item in figures:
        files = (inputs or {}).get(item.get("query") or "", [])
        lineage = {"inputs": [path for path, _ in files], "inputs_sha256": [digest for _, digest in files]}
        repeats = item.get("repeats")
        row = {**_row(item), **lineage}
        if repeats:
            row |= {
                "between_run_sd": repeats.get("between_run_sd"),
                "between_run_range": repeats.get("between_run_range"),
                "repeats_interval_method": repeats.get("interval_method"),
            }
        rows.append(row)
        identity = {key: item.get(key) for key in ("candidate", "metric", "basis", "arm", "unit", "claimed")}
        for run in (repeats or {}).get("runs", []):
            rows.append({**_row({**identity, **run}), **lineage})
    return pa.Table.from_pylist(rows, schema=FIGURES_SCHEMA)


def _row(item: dict) -> dict:
    return {name: item.get(name) for name in FIGURES_SCHEMA.names if name not in ("inputs", "inputs_sha256")}


def figures_from_table(table: pa.Table) -> list[dict]:
    """The figures as the pack shows them: the combined rows, each with its runs gathered back into
    `repeats`, without the keys that say nothing for it."""
    rows = table.to_pylist()
    runs: dict[tuple, list[dict]] = {}
    for row in rows:
        if row.get("repeat") is not None:
            runs.setdefault(_identity(row), []).append(row)
    out = []
    for row in rows:
        if row.get("repeat") is not None:
            continue
        item = {key: value for key, value in row.items() if key not in _DROPPED}
        for key in _ONLY_WHEN_SET:
            if item.get(key) is None:
                item.pop(key, None)
        if item.get("delta") is None and row["metric"] != "accuracy":
            item.pop("delta", None)
        if item.get("design_effect") is None and "interval_method" not in item:
            item.pop("design_effect", None)
        if _identity(row) in runs:
            item["repeats"] = {
                "runs": [_run(run) for run in runs[_identity(row)]],
                "between_run_sd": row["between_run_sd"],
                "between_run_range": row["between_run_range"],
                "interval_method": row["repeats_interval_method"],
            }
        out.append(item)
    return out


_DROPPED = (
    "repeat",
    "between_run_sd",
    "between_run_range",
    "repeats_interval_method",
    "inputs",
    "inputs_sha256",
    "arm",
    "run_id",
)


def _run(row: dict) -> dict:
    """One run's figure as the pack shows it: its method and design effect only where it has one."""
    run = {key: row[key] for key in RUN_KEYS}
    if run["interval_method"] is None:
        run.pop("interval_method")
        run.pop("design_effect")
    return run


def _identity(row: dict) -> tuple:
    return row["candidate"], row["metric"], row["basis"]


def same_value(a, b) -> bool:
    """A value re-computed is the value written: numbers to 1e-9 relative (the order DuckDB sums
    in may differ between runs), anything else exactly."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12)
    return a == b


def table_differences(written: pa.Table, fresh: pa.Table) -> list[str]:
    """What differs between `data/figures.parquet` as written and as re-computed, one line per row
    and column (a row only one side has is named too)."""
    where = f"{FIGURES.path}: "
    written_rows = {_key(row): row for row in written.to_pylist()}
    fresh_rows = {_key(row): row for row in fresh.to_pylist()}
    problems = [f"{where}{describe_row(fresh_rows[k])}: not in the file" for k in fresh_rows if k not in written_rows]
    problems += [
        f"{where}{describe_row(written_rows[k])}: not re-computable from the raw timings"
        for k in written_rows
        if k not in fresh_rows
    ]
    # a table written before a column was added is compared on the columns it has
    columns = [name for name in VALUE_COLUMNS if name in written.schema.names]
    for key, row in written_rows.items():
        again = fresh_rows.get(key)
        if again is None:
            continue
        problems += [
            f"{where}{describe_row(row)}: {name} in the file {row.get(name)!r}, re-computed {again.get(name)!r}"
            for name in columns
            if not same_value(row.get(name), again.get(name))
        ]
    return problems


def _key(row: dict) -> tuple:
    return tuple(row[name] for name in ROW_KEY)


def describe_row(row: dict) -> str:
    """A row's name in a problem: candidate/metric (basis[, run k])."""
    run = f", run {row['repeat']}" if row.get("repeat") is not None else ""
    return f"{row['candidate']}/{row['metric']} ({row['basis']}{run})"


def figure_key(row: dict) -> str:
    """`candidate/metric/basis`: one figure of a pack (a figure without a basis, written before
    bases, is at the production load)."""
    return f"{row['candidate']}/{row['metric']}/{row.get('basis') or PRODUCTION_LOAD}"


def claimed_figures(rows: list[dict]) -> dict[str, dict]:
    """Each claimed figure keyed by `figure_key`, from the figures table's rows (or the pack's
    figures, which are those rows): a metric judged at the production load, the capacity at the
    SLA and the vendor's conditions keeps three rows, never one overwriting another. A repeated
    replay's per-run rows are not figures of their own."""
    return {figure_key(row): row for row in rows if row.get("claimed") is not None and row.get("repeat") is None}


def claimed_verdicts(rows: list[dict]) -> dict[str, str | None]:
    """Each claimed figure's verdict keyed by `figure_key` (`claimed_figures`)."""
    return {key: row["verdict"] for key, row in claimed_figures(rows).items()}


FIGURES_MARKDOWN_COLUMNS = (
    "candidate",
    "metric",
    "basis",
    "claimed",
    "measured",
    "interval",
    "n",
    "verdict",
    "lineage",
)


def figures_markdown(rows: list[dict]) -> str:
    """The figures table's rows as a Markdown table (the Dagster UI's view of a partition's figures):
    each figure with its basis, claim, value, interval, n, verdict and lineage — the query and every
    input file with its sha256 — exactly the rows the pack renders. A repeated replay's per-run rows
    are the figure's `repeats`, not figures of their own."""
    lines = ["| " + " | ".join(FIGURES_MARKDOWN_COLUMNS) + " |", "|" + "---|" * len(FIGURES_MARKDOWN_COLUMNS)]
    for row in rows:
        if row.get("repeat") is not None:
            continue
        interval = f"{_number(row.get('ci_low'))} – {_number(row.get('ci_high'))}"
        inputs = zip(row.get("inputs") or [], row.get("inputs_sha256") or [], strict=True)
        lineage = "; ".join([f"sql/{row['query']}.sql" if row.get("query") else "", *(f"{p} {h}" for p, h in inputs)])
        verdict = row.get("verdict") or row.get("not_judged") or ("—" if row.get("claimed") is None else "")
        cells = [
            row["candidate"],
            row["metric"],
            row.get("basis") or PRODUCTION_LOAD,
            _number(row.get("claimed")),
            _number(row.get("measured")) + (f" {row['unit']}" if row.get("unit") else ""),
            interval,
            "" if row.get("n") is None else str(row["n"]),
            verdict,
            lineage.strip("; "),
        ]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def _number(value: float | None) -> str:
    """A figure's value as the table holds it, to 6 significant digits; open (None) as '—'."""
    return "—" if value is None else f"{value:.6g}"
