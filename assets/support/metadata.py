"""Materialisation metadata shared by every asset: path, sha256, rows, column schema, a preview,
and the files and queries it was made from, each with its sha256.

The hashes are `pipeline/files/hashing.py`'s, the function a pack's lineage rows and manifest and
`loadproof verify` use, with paths named as a pack names them (relative to the pack folder, `sql/`
for a query), so a hash in the UI is the one the pack shows beside the same file."""

from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import MetadataValue, TableColumn, TableSchema

from pipeline import REPO_ROOT
from pipeline.contracts import SHARED_INPUTS, PackFile
from pipeline.contracts.columns import column_description
from pipeline.duck.catalog import REPO_QUERIES
from pipeline.files.hashing import file_ref, sha256_file
from pipeline.files.layout import PackLayout, write_parquet
from pipeline.privacy import MESSAGE_COLUMNS, TEXT_COLUMNS

PREVIEW_ROWS = 5
PREVIEW_CELL_CHARS = 60
# never shown in a preview, whatever privacy.text says: the Dagster instance is no place for
# customer text (the file itself, under keep, still has it)
WITHHELD_FROM_PREVIEWS = MESSAGE_COLUMNS | TEXT_COLUMNS


def table_metadata(table: pa.Table, path: Path, run_id: str | None = None) -> dict:
    """The written file's path, sha256, rows, column schema (each column's description from the
    contracts registry: a pack table is `data/<its PackFile name>.parquet`) and a preview."""
    columns = [
        TableColumn(name=field.name, type=str(field.type), description=column_description(path.stem, field.name))
        for field in table.schema
    ]
    meta = {
        "path": MetadataValue.path(str(path)),
        "sha256": sha256_file(path),
        "dagster/row_count": table.num_rows,
        "dagster/column_schema": TableSchema(columns=columns),
        "preview": MetadataValue.md(markdown_preview(table)),
    }
    if run_id:
        meta["run_id"] = run_id
    return meta


def markdown_preview(table: pa.Table, rows: int = PREVIEW_ROWS) -> str:
    names = table.schema.names
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    for record in table.slice(0, rows).to_pylist():
        cells = [
            "(withheld)" if name in WITHHELD_FROM_PREVIEWS and record[name] is not None else _cell(record[name])
            for name in names
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(value) -> str:
    return str(value)[:PREVIEW_CELL_CHARS].replace("|", "\\|").replace("\n", " ")


def with_run_id(table: pa.Table, run_id: str) -> pa.Table:
    """Every table carries the run id (ARCHITECTURE.md, "Data contracts")."""
    if "run_id" in table.schema.names:
        return table
    return table.append_column("run_id", pa.array([run_id] * table.num_rows, pa.string()))


def write_table(
    context,
    layout: PackLayout,
    file: PackFile,
    table: pa.Table,
    *,
    sql: bool = False,
    staged: Sequence[str] = (),
    inputs: Iterable[PackFile] = (),
    run_id: str | None = None,
) -> dict:
    """Write `table` (with a run id) as the declared `file`; return its materialisation metadata.
    `sql`: the table is the result of sql/<file name>.sql (`staged`: the queries it read first),
    named with their sha256 for lineage; `inputs`: the partition's files it was made from.

    The run id a derived table carries is its inputs' (`input_run_id`: the replay run that made
    the raw timings), not the run that wrote it, so re-materialising it on the same inputs writes
    the same bytes; `run_id` names it instead (a measurement: the run that measured)."""
    inputs = tuple(inputs)
    meta = input_files(layout, inputs)  # hashed as read, before the table is written
    carried = run_id or input_run_id(layout, inputs) or context.run_id
    path = write_parquet(with_run_id(table, carried), layout.path(file))
    meta.update(table_metadata(table, path, context.run_id))
    if sql:
        meta.update(query_files(file.name, staged))
    return meta


def input_run_id(layout: PackLayout, inputs: Iterable[PackFile]) -> str | None:
    """The run id the first of `inputs` that carries one holds (the partition's own files before
    the shared ones copied into it): the run whose measurement a derived table is made from; None
    when no input carries one."""
    files = [file for file in inputs if file.format == "parquet"]
    for file in [f for f in files if f not in SHARED_INPUTS] + [f for f in files if f in SHARED_INPUTS]:
        path = layout.path(file)
        if not path.is_file() or "run_id" not in pq.read_schema(path).names:
            continue
        column = pq.read_table(path, columns=["run_id"]).column("run_id")
        if len(column) and column[0].is_valid:
            return column[0].as_py()
    return None


def input_files(layout: PackLayout, files: Iterable[PackFile]) -> dict:
    """`inputs`: each of `files` present in `layout`, as a pack's lineage row names it (its path
    relative to the pack folder, its sha256); nothing when none is given."""
    refs = [file_ref(layout.path(file), layout.root) for file in files if layout.path(file).is_file()]
    return {"inputs": MetadataValue.json(refs)} if refs else {}


def query_files(name: str, staged: Sequence[str] = ()) -> dict:
    """`sql` and `sql_sha256`: the query the table is the result of; `staged_sql`: the queries it
    read first, each `{path, sha256}` (a pack's copy of a query is byte for byte this file)."""
    meta: dict = {"sql": f"sql/{name}.sql", "sql_sha256": sha256_file(REPO_QUERIES.path(name))}
    if staged:
        meta["staged_sql"] = MetadataValue.json([file_ref(REPO_QUERIES.path(step), REPO_ROOT) for step in staged])
    return meta


def source_files(paths: Iterable[str | Path]) -> dict:
    """`inputs`: files read from outside the pack folder (the buyer's log, the labelled slice),
    each `{path, sha256}` with the path as given."""
    refs = [{"path": str(path), "sha256": sha256_file(Path(path))} for path in paths if Path(path).is_file()]
    return {"inputs": MetadataValue.json(refs)} if refs else {}


def written_file(path: Path) -> dict:
    """`path` and `sha256` of a document an asset wrote (JSON, the pack's pages)."""
    return {"path": MetadataValue.path(str(path)), "sha256": sha256_file(path)}
