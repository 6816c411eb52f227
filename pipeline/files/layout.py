"""Where every file of a re-validation lives, relative to its pack folder (e.g. out/demo/)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.contracts import DATA_DIR, SHARED_INPUTS, PackFile
from pipeline.duck.catalog import SQL_DIR
from pipeline.files.partition_keys import partition_safe

CANDIDATES_DIR = "candidates"

# How every Parquet file of a pack is written, pinned: the same table gives the same bytes on
# every write (a re-materialised asset on the same inputs leaves the manifest's sha256 true).
# pyarrow's writer is deterministic for fixed settings (its `created_by` names only the pyarrow
# version); the settings are spelt out so a library default that changes cannot change the bytes.
PARQUET_COMPRESSION = "zstd"
PARQUET_COMPRESSION_LEVEL = 1
PARQUET_ROW_GROUP_ROWS = 131_072
PARQUET_WRITER: dict = {
    "compression": PARQUET_COMPRESSION,
    "compression_level": PARQUET_COMPRESSION_LEVEL,
    "row_group_size": PARQUET_ROW_GROUP_ROWS,
    "version": "2.6",
    "data_page_version": "1.0",
    "use_dictionary": True,
    "write_statistics": True,
    "store_schema": True,
    "write_page_index": False,
    "write_page_checksum": False,
}


@dataclass(frozen=True)
class PackLayout:
    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / DATA_DIR

    def path(self, file: PackFile) -> Path:
        """Where one declared file lives in this folder, e.g. <root>/data/raw_timings.parquet."""
        return self.root / file.path

    def journal(self, run_id: str, candidate: str) -> Path:
        return self.root / "journal" / f"{run_id}-{candidate}.jsonl"

    @property
    def sql_dir(self) -> Path:
        return self.root / "sql"

    @property
    def spec_copy(self) -> Path:
        return self.root / "spec.yaml"

    def claim_file_copy(self, relative: str) -> Path | None:
        """Where the vendor's result file the spec's claim reads (`claim.from`, relative to the
        spec) is copied beside the spec's copy, so that `verify` loads the copy as it was loaded
        (and the manifest hashes it); None for an absolute path or one that leaves the folder
        (verify then reads it where it is)."""
        path = Path(relative)
        if path.is_absolute() or ".." in path.parts or path.as_posix() in ("spec.yaml", "evidence_pack.json"):
            return None
        return self.root / path

    def candidate_dir(self, candidate: str) -> Path:
        return self.root / CANDIDATES_DIR / partition_safe(candidate)

    def partition(self, candidate: str, version: str) -> PackLayout:
        """The pack folder of one candidate × model version: candidates/<candidate>/<version>/."""
        return PackLayout(self.candidate_dir(candidate) / partition_safe(version))

    def sync_inputs_into(self, partition: PackLayout) -> None:
        """Copy each shared input a partition's folder lacks or holds in an older version
        (size or mtime differ; copy2 keeps the mtime), atomically file by file.

        What a candidate × version re-validation was measured with: the shared tables its pack
        reads (`contracts.SHARED_INPUTS`), snapshotted into its own folder so the pack stands alone
        and a later re-plan never changes a past version's evidence."""
        partition.data_dir.mkdir(parents=True, exist_ok=True)
        for file in SHARED_INPUTS:
            source, target = self.path(file), partition.path(file)
            if not source.is_file():
                continue
            if target.is_file() and _same_file_state(source, target):
                continue
            partial = target.with_suffix(target.suffix + ".partial")
            shutil.copy2(source, partial)
            os.replace(partial, target)

    def copy_sql(self, names: list[str]) -> list[Path]:
        """Copy the queries a figure came from into the pack, so lineage paths resolve inside it."""
        self.sql_dir.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copy2(SQL_DIR / f"{name}.sql", self.sql_dir / f"{name}.sql")) for name in names]


def write_parquet(table: pa.Table, path: Path) -> Path:
    """Write atomically (a reader never sees half a file, a re-run never mixes two) with the pinned
    settings (`PARQUET_WRITER`): the same table, the same bytes (`settle`: the same rows with
    another run id leave the file as it was)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    pq.write_table(table, partial, **PARQUET_WRITER)
    return settle(partial, path)


COMPARE_BATCH_ROWS = 65_536


def settle(partial: Path, path: Path) -> Path:
    """Put the freshly written `partial` in `path`'s place, unless `path` already holds the same
    rows in the same order with only another `run_id` (a table re-made from the same inputs by a
    later run, e.g. the log ingested again): that file stays, bytes and run id, so a
    re-materialised asset leaves a sealed pack verifying and the rows name the run that first
    made them. Compared a batch at a time; a difference ends it at once."""
    if path.is_file() and same_rows_but_run_id(path, partial):
        partial.unlink()
    else:
        os.replace(partial, path)
    return path


def same_rows_but_run_id(one: Path, other: Path) -> bool:
    """Whether two Parquet files hold the same schema and rows in the same order, `run_id` aside."""
    first, second = pq.ParquetFile(one), pq.ParquetFile(other)
    if first.metadata.num_rows != second.metadata.num_rows or not first.schema_arrow.equals(second.schema_arrow):
        return False
    columns = [name for name in first.schema_arrow.names if name != "run_id"]
    if len(columns) == len(first.schema_arrow.names):
        return False  # no run id to differ in: an unchanged table is written again, to the same bytes
    batches = zip(
        first.iter_batches(COMPARE_BATCH_ROWS, columns=columns),
        second.iter_batches(COMPARE_BATCH_ROWS, columns=columns),
    )
    return all(mine.equals(theirs) for mine, theirs in batches)


def write_text(text: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path


def _same_file_state(one: Path, other: Path) -> bool:
    a, b = one.stat(), other.stat()
    return a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns
