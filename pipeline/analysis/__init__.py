"""Raw timings → decision tables (DuckDB queries in sql/), the statistics behind their intervals,
the metric catalogue."""
