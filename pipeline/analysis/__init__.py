"""The analysis stage: raw timings into the figures, with DuckDB (the queries are in sql/).

Its rooms, one sub-package each:

- `judge/`: each figure made beside its claim, with its verdict: headline, arms, repeats, unjudged claims,
  figures.parquet.
- `sizing/`: how much load a candidate carries: the sweep's levels, capacity at the SLA, replicas, users at a tier.
- `endpoint_view/`: the endpoint's own view as tables: token agreement, prefix-cache hits, the server's /metrics,
  GPU energy.
- `tabulate/`: raw timings into the analysis tables by the sql/ queries: latency, throughput, errors, cost,
  accuracy.
- `statistics/`: the arithmetic under intervals and verdicts: order statistics, Wilson, batch means, the steady
  state.
- `declare/`: the metric catalogue: every figure declared once, and the questions the stages ask of it by name.
"""
