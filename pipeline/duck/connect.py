"""Every DuckDB connection the tool opens, with the same settings.

A bounded memory limit and a spill folder of its own keep a 10-million-row log or raw-timings
table within a few GiB (DuckDB spills sorts, joins and aggregates past the limit); the session
time zone is UTC so that TIMESTAMPTZ values never depend on the machine's zone.

A new DuckDB database costs ~15 ms of CPU (it builds its catalogue of built-in functions and
starts its threads), which is most of a query on a small table: `loadproof verify` opened 240 of
them. So a process keeps one database per memory limit and each `connection` is a cursor on it
with an empty in-memory database of its own attached and in use (~1 ms): the tables and views
a session creates are its own, never seen by another session, and freed when it closes. The
memory limit and the spill folder are the database's, shared by the sessions open at once.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog

DEFAULT_MEMORY_LIMIT = "2GB"
# the analysis of the raw timings (pipeline/analysis/tabulate/tables.py's steady session): its staged
# steady_requests is ~2.3 GB at 10 M rows, so at 2 GB it spilled ~0.4 GB that every later query read
# back (10 M rows: 10.3 s at 2 GB, 9.4 s at 3 GB; peak RSS 2.5 -> 3.2 GB, within the 4 GiB budget)
ANALYSIS_MEMORY_LIMIT = "3GB"
# DuckDB's threads per database (default: one per core); `make test` sets 1, as its pytest workers
# already keep every core busy and more threads than cores only add switching
THREADS_ENV = "LOADPROOF_DUCKDB_THREADS"

_DATABASES: dict[tuple[int, str], duckdb.DuckDBPyConnection] = {}
_OPENING = threading.Lock()
_SESSION_NUMBERS = itertools.count()


def _database(memory_limit: str) -> duckdb.DuckDBPyConnection:
    """This process's database with `memory_limit` (a forked child opens its own: a DuckDB
    database is not carried across a fork)."""
    key = (os.getpid(), memory_limit)
    with _OPENING:
        database = _DATABASES.get(key)
        if database is None:
            spill = tempfile.mkdtemp(prefix="loadproof-duckdb-")
            database = duckdb.connect(
                config={
                    "memory_limit": memory_limit,
                    "temp_directory": spill,
                    # a file re-written between two sessions is read again, never served from a cache
                    "enable_external_file_cache": False,
                    **_threads(),
                }
            )
            _DATABASES[key] = database
            atexit.register(_close, database, spill)
    return database


def _threads() -> dict[str, int]:
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return {}
    if not value.isdigit() or int(value) < 1:
        raise ValueError(
            f"{THREADS_ENV}={value!r}: expected a whole number of threads, 1 or more (unset: one per core)"
        )
    return {"threads": int(value)}


def _close(database: duckdb.DuckDBPyConnection, spill: str) -> None:
    database.close()
    shutil.rmtree(spill, ignore_errors=True)


@contextmanager
def connection(memory_limit: str = DEFAULT_MEMORY_LIMIT) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with the house settings whose tables and views are its own and go when it closes."""
    con = _database(memory_limit).cursor()
    # a name, not a value: the session's own database, unique in this process
    own = f"session_{next(_SESSION_NUMBERS)}"
    try:
        con.execute(f"ATTACH ':memory:' AS {own}")
        con.execute(f"USE {own}")
        con.execute("SET enable_progress_bar = false")
        con.execute("SET TimeZone = 'UTC'")
        yield con
    finally:
        try:
            con.execute("USE memory")
            con.execute(f"DETACH DATABASE IF EXISTS {own}")
        except duckdb.ConnectionException:
            pass  # the database was closed first (at the process's exit): nothing is left to free
        finally:
            con.close()


def run(
    con: duckdb.DuckDBPyConnection, name: str, params: dict | None = None, queries: QueryCatalog = REPO_QUERIES
) -> duckdb.DuckDBPyRelation:
    """`<name>.sql` as a lazy relation on `con`, bound to the parameters it names."""
    text, used = queries.bound(name, params)
    return con.sql(text, params=used)
