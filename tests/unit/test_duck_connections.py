"""`pipeline.duck.connect.connection`: cursors on one database per process, each session with a
database of its own attached, so what one session creates no other sees, and it goes at close."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

from pipeline.duck import connect
from pipeline.duck.connect import connection


def _tables(con) -> set[str]:
    return {name for (name,) in con.sql("SELECT table_name FROM duckdb_tables()").fetchall()}


def test_two_open_sessions_each_have_their_own_tables_and_views() -> None:
    with connection() as first, connection() as second:
        first.sql("SELECT 1 AS x").to_table("staged")
        first.from_arrow(pa.table({"y": [10]})).create_view("bound", replace=True)
        second.sql("SELECT 2 AS x").to_table("staged")  # the same name, no clash
        second.from_arrow(pa.table({"y": [20]})).create_view("bound", replace=True)
        assert first.sql("SELECT x, y FROM staged, bound").fetchall() == [(1, 10)]
        assert second.sql("SELECT x, y FROM staged, bound").fetchall() == [(2, 20)]
        # the house settings hold on each
        assert second.sql("SELECT current_setting('TimeZone')").fetchall() == [("UTC",)]


def test_a_closed_sessions_tables_are_gone_and_the_database_is_reused() -> None:
    with connection() as con:
        con.sql("SELECT range AS x FROM range(1000)").to_table("left_behind")
        database = connect._DATABASES[next(key for key in connect._DATABASES if key[1] == connect.DEFAULT_MEMORY_LIMIT)]
    with connection() as con:
        assert "left_behind" not in _tables(con)
    attached = {name for (name,) in database.sql("SELECT database_name FROM duckdb_databases()").fetchall()}
    assert not any(name.startswith("session_") for name in attached), attached


def test_a_failed_query_still_closes_its_session() -> None:
    with pytest.raises(Exception, match="no_such_table"), connection() as con:
        con.sql("SELECT 1 AS x").to_table("half_done")
        con.sql("SELECT * FROM no_such_table").fetchall()
    with connection() as con:
        assert "half_done" not in _tables(con)


def test_sessions_on_several_threads_keep_apart() -> None:
    results: dict[int, list] = {}

    def work(number: int) -> None:
        with connection() as con:
            con.sql("SELECT range AS x FROM range($n)", params={"n": number * 1000}).to_table("mine")
            results[number] = con.sql("SELECT count(*) FROM mine").fetchall()

    threads = [threading.Thread(target=work, args=(number,)) for number in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {number: [(number * 1000,)] for number in range(1, 5)}


def test_the_thread_setting_names_a_bad_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(connect.THREADS_ENV, "two")
    with pytest.raises(ValueError, match="LOADPROOF_DUCKDB_THREADS='two': expected a whole number"):
        connect._threads()
    monkeypatch.setenv(connect.THREADS_ENV, "1")
    assert connect._threads() == {"threads": 1}
    monkeypatch.delenv(connect.THREADS_ENV)
    assert connect._threads() == {}
