"""A chain of queries on one DuckDB connection: inputs bound once, shared steps staged once.

`run_query` runs one query; analyses that need a Python step between two queries (exact
binomial ranks between the histogram and the order statistics) or several tables from the same
staged steps keep a `QuerySession` open. No value is ever formatted into SQL text: files bind
through DuckDB's relational API and values through `$name` parameters.

A query runs as a prepared statement on the connection (`execute`), not as a relation
(`con.sql`): DuckDB 2.0's relation layer parses and binds a query once more in Python before it
runs it, ~20 % of an analysis on demo-sized tables (bench/CHANGELOG.md). The results here are
aggregates, so the copy DuckDB warns of (a DB-API result's rows copied into Arrow) is small; the
stages that read whole logs use `pipeline.duck.connect.run`, a lazy relation.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

import duckdb
import pyarrow as pa

from pipeline import contracts
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.duck.connect import DEFAULT_MEMORY_LIMIT, connection

# the copy it warns of is an aggregate's few rows here (the module docstring)
warnings.filterwarnings("ignore", message="Arrow output on a DB-API result", category=UserWarning)


@functools.lru_cache(maxsize=512)
def statements(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A query file's statements (some define macros before their query), each with the
    `$parameters` it names; parsed once per text."""
    return tuple(
        (statement.query, frozenset(statement.named_parameters)) for statement in duckdb.extract_statements(text)
    )


class QuerySession:
    def __init__(
        self,
        views: dict[str, Path | pa.Table],
        params: dict | None = None,
        queries: QueryCatalog = REPO_QUERIES,
        optional_columns: bool = True,
        memory_limit: str = DEFAULT_MEMORY_LIMIT,
    ) -> None:
        """`optional_columns`: a view named after a pack table (e.g. raw_timings) gets the columns its
        contract marks optional, as typed NULLs, when its file lacks them (pipeline/contracts/)."""
        self.params = dict(params or {})
        self.queries = queries
        self._closing = ExitStack()
        self.con: duckdb.DuckDBPyConnection = self._closing.enter_context(connection(memory_limit))
        self._keep: list[pa.Table] = []  # Arrow tables must outlive the views bound to them
        for name, source in views.items():
            self.bind(name, source, contracts.optional_columns(name) if optional_columns else None)

    def bind(self, name: str, source: Path | pa.Table, optional: Mapping[str, str] | None = None) -> None:
        """Bind a Parquet file or an Arrow table as a view, adding missing `optional` columns."""
        if isinstance(source, pa.Table):
            self._keep.append(source)
            relation = self.con.from_arrow(source)
        else:
            relation = self.con.read_parquet(str(source))
        optional = optional or {}
        missing = [column for column in optional if column not in relation.columns]
        if missing:
            extra = ", ".join(f"CAST(NULL AS {optional[c]}) AS {c}" for c in missing)
            relation = relation.project(f"*, {extra}")
        relation.create_view(name, replace=True)

    def stage(self, name: str, replace: bool = False) -> None:
        """Materialise sql/<name>.sql as a temp table of the same name (`replace`: one staged
        earlier in this session is dropped first)."""
        if replace:
            self.con.execute(f"DROP TABLE IF EXISTS {name}")
        query, params = self._prepared(name)
        self.con.execute(f"CREATE TABLE {name} AS {query}", params)

    def define_view(self, name: str) -> None:
        """Define sql/<name>.sql as a view: re-read on each use, never held in memory. A view
        definition cannot hold prepared parameters, so such a query may use none."""
        text, used = self._bound(name)
        if used or "$" in text.replace("$$", ""):
            raise ValueError(f"{self.queries.path(name)} is defined as a view and may not use $parameters")
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {text}")

    def staged(self, name: str) -> pa.Table:
        """The rows of a query staged earlier in this session, without running it again."""
        return self.con.table(name).to_arrow_table()

    def run(self, name: str) -> pa.Table:
        query, params = self._prepared(name)
        return self.con.execute(query, params).to_arrow_table()

    def _prepared(self, name: str) -> tuple[str, dict]:
        """The query's last statement and its parameters, the statements before it (macros) run."""
        *before, last = statements(self.queries.text(name))
        for query, names in before:
            self.con.execute(query, self._values(names))
        return last[0], self._values(last[1])

    def _values(self, names: frozenset[str]) -> dict:
        # a name the session has no value for is left for DuckDB to name as missing
        return {key: self.params[key] for key in names if key in self.params}

    def _bound(self, name: str) -> tuple[str, dict]:
        return self.queries.bound(name, self.params)

    def close(self) -> None:
        self._closing.close()

    def __enter__(self) -> QuerySession:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def run_query(
    name: str,
    views: dict[str, Path | pa.Table],
    params: dict | None = None,
    staged: tuple[str, ...] = (),
    queries: QueryCatalog = REPO_QUERIES,
) -> pa.Table:
    """Run `<name>.sql` with each view bound to a Parquet file (or an Arrow table).

    `staged` names queries materialised first as temp tables of the same name (e.g.
    `steady_requests`), so steps shared by several queries are written once.
    """
    with QuerySession(views, params, queries, optional_columns=False) as session:
        for stage in staged:
            session.stage(stage)
        return session.run(name)
