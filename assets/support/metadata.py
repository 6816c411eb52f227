"""Materialisation metadata shared by every asset: path, rows, column schema, a preview."""

from pathlib import Path

import pyarrow as pa
from dagster import (
    AssetExecutionContext,
    AssetsDefinition,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableSchema,
    asset,
)

from assets.support.partitions import REVALIDATION_PARTITIONS, partition_layout
from pipeline.contracts import PackFile
from pipeline.files.layout import PackLayout, write_parquet
from pipeline.privacy import MESSAGE_COLUMNS, TEXT_COLUMNS
from resources import PackStorage, SpecResource

PREVIEW_ROWS = 5
PREVIEW_CELL_CHARS = 60
# never shown in a preview, whatever privacy.text says: the Dagster instance is no place for
# customer text (the file itself, under keep, still has it)
WITHHELD_FROM_PREVIEWS = MESSAGE_COLUMNS | TEXT_COLUMNS


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


def write_table(context, layout: PackLayout, file: PackFile, table: pa.Table, *, sql: bool = False) -> dict:
    """Write `table` (with the run id) as the declared `file`; return its materialisation metadata.
    `sql`: the table is the result of sql/<file name>.sql, named in the metadata for lineage."""
    path = write_parquet(with_run_id(table, context.run_id), layout.path(file))
    meta = table_metadata(table, path, context.run_id)
    if sql:
        meta["sql"] = f"sql/{file.name}.sql"
    return meta


def derived_table_asset(
    file: PackFile, compute, source: PackFile, *, group: str, deps: list, description: str
) -> AssetsDefinition:
    """A partitioned asset that is one query over another of the partition's tables:
    `compute(source path, spec)` written as `file`."""

    @asset(name=file.name, partitions_def=REVALIDATION_PARTITIONS, group_name=group, deps=deps, description=description)
    def derived(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
        layout = partition_layout(storage, context)
        table = compute(layout.path(source), spec.load().spec)
        return MaterializeResult(metadata=write_table(context, layout, file, table, sql=True))

    return derived
