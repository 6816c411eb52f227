"""LiteLLM's spend logs read straight from the proxy's PostgreSQL table, in batches.

The DSN comes from the environment variable the spec names (`dsn_env`), never from the spec,
and is written nowhere: the source is named by host, port, database and table only. Each row
arrives as one JSON text (sql/litellm_spend_logs_postgres.sql: row_to_json in primary-key
order), so the JSON-lines export's query reads the table too; a row's "line" is its position in
request_id order and a rejected row's reason starts with its request_id. A server-side cursor
streams the rows, BATCH_ROWS at a time, into a DuckDB table: memory stays flat however large the
table is.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from pipeline.duck.catalog import REPO_QUERIES

if TYPE_CHECKING:
    import psycopg

BATCH_ROWS = 50_000
TABLE = "LiteLLM_SpendLogs"
LINES_SCHEMA = pa.schema([("file_id", pa.int64()), ("source_line", pa.int64()), ("line", pa.string())])


class DatabaseError(ValueError):
    """The database cannot be read (no DSN, no connection, no table); says which, never the DSN."""


def read_spend_logs_table(con: duckdb.DuckDBPyConnection, dsn_env: str) -> str:
    """Fill `log_lines` (file_id 0) and an empty `line_rejects` from the table; returns the source's name."""
    import psycopg  # here, not at the top: only a database source needs the driver

    dsn = os.environ.get(dsn_env)
    if not dsn:
        raise DatabaseError(f"environment variable {dsn_env} (the spec's workload.log.dsn_env) is not set")
    try:
        connection = psycopg.connect(dsn, autocommit=False)
    except psycopg.Error as error:
        # psycopg's message names host and port, never the password
        raise DatabaseError(f"cannot connect to the database of {dsn_env}: {error}".strip()) from None
    with connection:
        name = source_name(connection)
        con.from_arrow(LINES_SCHEMA.empty_table()).to_table("log_lines")
        try:
            with connection.cursor(name="loadproof_spend_logs") as cursor:
                cursor.itersize = BATCH_ROWS
                cursor.execute(REPO_QUERIES.text("litellm_spend_logs_postgres"))
                line = 0
                while rows := cursor.fetchmany(BATCH_ROWS):
                    numbers = range(line + 1, line + len(rows) + 1)
                    batch = pa.table(
                        [pa.array([0] * len(rows), pa.int64()), pa.array(numbers, pa.int64()), [r[1] for r in rows]],
                        schema=LINES_SCHEMA,
                    )
                    con.from_arrow(batch).insert_into("log_lines")
                    line += len(rows)
        except psycopg.Error as error:
            raise DatabaseError(f"{name}: {error}".strip()) from None
    files = pa.table({"file_id": pa.array([0], pa.int64()), "source_file": [name], "first_index": [1]})
    con.from_arrow(files).to_table("log_files")
    con.from_arrow(EMPTY_REJECTS).to_table("line_rejects")
    return name


def source_name(connection: psycopg.Connection) -> str:
    """postgresql://host:port/database#table: where the rows came from, without user or password."""
    info = connection.info
    host = info.host if not info.host.startswith("/") else "localhost"
    return f"postgresql://{host}:{info.port}/{info.dbname}#{TABLE}"


EMPTY_REJECTS = pa.table(
    {
        "source_file": pa.array([], pa.string()),
        "source_line": pa.array([], pa.int64()),
        "reason": pa.array([], pa.string()),
        "raw": pa.array([], pa.string()),
    }
)
