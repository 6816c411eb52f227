"""The analysis stage: raw timings into the figures, with DuckDB (the queries are in sql/).

`tables` the latency, throughput, error, cost and accuracy tables; `stats` intervals and
verdicts; `sweep` the load sweep's per-level and summary tables; `metrics` the catalogue of
figure names, units and directions.
"""
