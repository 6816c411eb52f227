"""Materialisation metadata shared by every asset: path, rows, column schema, a preview."""

from pathlib import Path

import pyarrow as pa
from dagster import MaterializeResult, MetadataValue, TableColumn, TableSchema

from assets.support.partitions import partition_layout
from pipeline.contracts import PackFile
from pipeline.pack.layout import write_parquet

PREVIEW_ROWS = 5
PREVIEW_CELL_CHARS = 60


def table_metadata(table: pa.Table, path: Path, run_id: str | None = None) -> dict:
    columns = [TableColumn(name=field.name, type=str(field.type)) for field in table.schema]
    meta = {
        "path": MetadataValue.path(str(path)),
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
        cells = [str(record[name])[:PREVIEW_CELL_CHARS].replace("|", "\\|").replace("\n", " ") for name in names]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def with_run_id(table: pa.Table, run_id: str) -> pa.Table:
    """Every table carries the run id (ARCHITECTURE.md, "Data contracts")."""
    if "run_id" in table.schema.names:
        return table
    return table.append_column("run_id", pa.array([run_id] * table.num_rows, pa.string()))


def materialise_table(context, file: PackFile, compute, source: PackFile, spec, storage):
    """Compute table `file` from the partition's `source` table, write it, return its materialisation."""
    layout = partition_layout(storage, context)
    table = compute(layout.path(source), spec.load().spec)
    path = write_parquet(with_run_id(table, context.run_id), layout.path(file))
    meta = table_metadata(table, path, context.run_id)
    meta["sql"] = f"sql/{file.name}.sql"
    return MaterializeResult(metadata=meta)
