"""The runs of a repeated production replay (`workload.replay.repeats`), told apart for analysis.

Every analysis table is a function of one replay: its steady-state window runs from the first
send + warm-up to the last end − cool-down, which across N back-to-back runs would span the
runs' own warm-ups and drains. So each run is analysed on its own, with the very same queries:
the tables under `data/` are the first run's (what a replay done once writes, so a spec without
repeats gets exactly the tables it always got), and the headline figures combine every run's
(`pipeline/analysis/judge/repeated_figures.py`). Raw timings written before repeats have no `repeat` column: one run.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.contracts import REPEAT_COLUMN

REPEAT = REPEAT_COLUMN[0]


def run_numbers(raw_timings: Path | pa.Table) -> list[int]:
    """The runs present, ascending ([0] for a replay done once, or raw timings without the column)."""
    if isinstance(raw_timings, pa.Table):
        column = raw_timings.column(REPEAT) if REPEAT in raw_timings.schema.names else None
    else:
        names = pq.read_schema(raw_timings).names
        column = pq.read_table(raw_timings, columns=[REPEAT]).column(REPEAT) if REPEAT in names else None
    if column is None:
        return [0]
    present = sorted(value for value in pc.unique(column.fill_null(0)).to_pylist())
    return present or [0]


def run_timings(raw_timings: Path | pa.Table, repeat: int) -> pa.Table:
    """The raw timings of one run."""
    table = raw_timings if isinstance(raw_timings, pa.Table) else pq.read_table(raw_timings)
    if REPEAT not in table.schema.names:
        return table
    return table.filter(pc.equal(table.column(REPEAT).fill_null(0), repeat))


def first_run(raw_timings: Path) -> Path | pa.Table:
    """What every analysis table reads: the file itself when it holds one run (unchanged from a
    replay done once), else the first run's rows."""
    return raw_timings if run_numbers(raw_timings) == [0] else run_timings(raw_timings, 0)
