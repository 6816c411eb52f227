"""Every DuckDB connection the tool opens, with the same settings.

A bounded memory limit and a spill folder of its own keep a 10-million-row log or raw-timings
table within a few GiB (DuckDB spills sorts, joins and aggregates past the limit); the session
time zone is UTC so that TIMESTAMPTZ values never depend on the machine's zone.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog

DEFAULT_MEMORY_LIMIT = "2GB"


@contextmanager
def connection(memory_limit: str = DEFAULT_MEMORY_LIMIT) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with the house settings and a spill folder removed when it closes."""
    with tempfile.TemporaryDirectory(prefix="loadproof-duckdb-") as spill:
        con = duckdb.connect(config={"memory_limit": memory_limit, "temp_directory": spill})
        try:
            con.execute("SET enable_progress_bar = false")
            con.execute("SET TimeZone = 'UTC'")
            yield con
        finally:
            con.close()


def run(
    con: duckdb.DuckDBPyConnection, name: str, params: dict | None = None, queries: QueryCatalog = REPO_QUERIES
) -> duckdb.DuckDBPyRelation:
    """`<name>.sql` as a lazy relation on `con`, bound to the parameters it names."""
    text, used = queries.bound(name, params)
    return con.sql(text, params=used)
