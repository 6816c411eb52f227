"""Where every file of a re-validation lives, relative to its pack folder (e.g. out/demo/)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.sqlrun import SQL_DIR


@dataclass(frozen=True)
class PackLayout:
    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def table(self, name: str) -> Path:
        """The Parquet file of one asset's table, e.g. data/raw_timings.parquet."""
        return self.data_dir / f"{name}.parquet"

    def json(self, name: str) -> Path:
        return self.data_dir / f"{name}.json"

    def journal(self, run_id: str, candidate: str) -> Path:
        return self.root / "journal" / f"{run_id}-{candidate}.jsonl"

    @property
    def sql_dir(self) -> Path:
        return self.root / "sql"

    @property
    def spec_copy(self) -> Path:
        return self.root / "spec.yaml"

    def copy_sql(self, names: list[str]) -> list[Path]:
        """Copy the queries a figure came from into the pack, so lineage paths resolve inside it."""
        self.sql_dir.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copy2(SQL_DIR / f"{name}.sql", self.sql_dir / f"{name}.sql")) for name in names]


def write_parquet(table: pa.Table, path: Path) -> Path:
    """Write atomically: a reader never sees half a file, a re-run never mixes two."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    pq.write_table(table, partial, compression="zstd")
    os.replace(partial, path)
    return path


def write_text(text: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path
