"""The one DuckDB layer: every connection's settings, where a query's text comes from, and query sessions."""
