"""The queries a headline figure read before its own, in the order `pipeline/analysis/tabulate/tables.py`
runs them: a figure's lineage names each (copied into the pack's `sql/` with its sha256), so a
reader can re-run the chain from the raw timings.

Its own module because both the headline figures (`pack/assemble/model.py`) and the load sweep's figures
(`pack/assemble/sweep.py`, which re-ran the headline queries per level) name the same chain; `lineage` makes
a figure's lineage from the copied files.
"""

LATENCY_STEPS = (
    "steady_windows",
    "itl_histogram",
    "latency_samples",
    "latency_batch_bins",
    "latency_histogram",
    "latency_counts",
    "latency_bin_values",  # the values of the bins an order statistic may be read from, gathered once
    "latency_batch_counts",  # the batch-means widening of the ranks (pipeline/analysis/statistics/dependence.py)
)
THROUGHPUT_STEPS = ("throughput_buckets", "concurrency_events", "reply_mix", "bill_check")


def lineage(sql_files: list[dict], inputs: list[dict]) -> dict:
    """sql: the query that computed the figure; staged: the queries it read; inputs: files."""
    return {
        "sql": sql_files[-1]["path"],
        "sql_sha256": sql_files[-1]["sha256"],
        "staged_sql": sql_files[:-1],
        "inputs": inputs,
    }
