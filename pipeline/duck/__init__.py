"""The one DuckDB layer: every query in sql/ runs through it.

- `catalog.QueryCatalog`: where a query's text comes from (the repository's sql/, or an evidence
  pack's own copy first, for `loadproof verify`), passed explicitly; no search path held globally.
- `connect.connection`: every connection gets the same settings: a memory limit, a spill folder,
  UTC as the session time zone, no progress bar.
- `session.QuerySession`: a chain of queries on one connection, inputs bound once, shared steps
  staged once; `session.run_query` runs one query.

No value is ever formatted into SQL text: Parquet files and Arrow tables bind through DuckDB's
relational API, values through `$name` parameters (each query gets only those it names).
"""
