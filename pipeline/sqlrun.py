"""Run the DuckDB queries in sql/: Parquet inputs bound as views, values bound as parameters.

No value is ever formatted into SQL text: file paths go through DuckDB's relational API and
figures through `$name` parameters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline import REPO_ROOT

SQL_DIR = REPO_ROOT / "sql"
_SEARCH_PATH: list[Path] = [SQL_DIR]


def sql_file(name: str) -> Path:
    for folder in _SEARCH_PATH:
        path = folder / f"{name}.sql"
        if path.is_file():
            return path
    raise FileNotFoundError(f"no query {name!r} in {', '.join(map(str, _SEARCH_PATH))}")


@contextmanager
def queries_from(folder: Path) -> Iterator[None]:
    """Read queries from `folder` first (e.g. the copies inside an evidence pack), then sql/."""
    _SEARCH_PATH.insert(0, folder)
    try:
        yield
    finally:
        _SEARCH_PATH.remove(folder)


def sql_sha256(name: str) -> str:
    return hashlib.sha256(sql_file(name).read_bytes()).hexdigest()


def run_query(
    name: str,
    views: dict[str, Path | pa.Table],
    params: dict | None = None,
    staged: tuple[str, ...] = (),
) -> pa.Table:
    """Execute sql/<name>.sql with each view bound to a Parquet file (or an Arrow table).

    `staged` names queries materialised first as temp tables of the same name (e.g.
    `steady_requests`), so steps shared by several queries are written once.
    """
    con = duckdb.connect()
    try:
        for view, source in views.items():
            relation = con.from_arrow(source) if isinstance(source, pa.Table) else con.read_parquet(str(source))
            relation.create_view(view)
        for stage in staged:
            con.sql(_bound(stage, params)[0], params=_bound(stage, params)[1]).to_table(stage)
        text, used = _bound(name, params)
        return con.sql(text, params=used).to_arrow_table()
    finally:
        con.close()


def _bound(name: str, params: dict | None) -> tuple[str, dict]:
    """The query text and the subset of parameters it names."""
    text = sql_file(name).read_text(encoding="utf-8")
    return text, {key: value for key, value in (params or {}).items() if f"${key}" in text}
