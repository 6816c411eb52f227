"""DuckDB connections for the heavy steps (ingest, sampling, profiling of whole logs).

A bounded memory limit and an explicit spill folder keep a 10-million-row log within a few GiB;
the session time zone is UTC so that TIMESTAMPTZ values never depend on the machine's zone.
Queries are the files in sql/ (via `run`), values always bound as `$name` parameters.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from pipeline.sqlrun import sql_file

DEFAULT_MEMORY_LIMIT = "2GB"


@contextmanager
def connection(memory_limit: str = DEFAULT_MEMORY_LIMIT) -> Iterator[duckdb.DuckDBPyConnection]:
    with tempfile.TemporaryDirectory(prefix="loadproof-duckdb-") as spill:
        con = duckdb.connect(config={"memory_limit": memory_limit, "temp_directory": spill})
        try:
            con.execute("SET enable_progress_bar = false")
            con.execute("SET TimeZone = 'UTC'")
            yield con
        finally:
            con.close()


def run(con: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> duckdb.DuckDBPyRelation:
    """sql/<name>.sql as a lazy relation, bound to the parameters it names."""
    text = sql_file(name).read_text(encoding="utf-8")
    used = {key: value for key, value in (params or {}).items() if f"${key}" in text}
    return con.sql(text, params=used)
