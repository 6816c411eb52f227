"""What each analysis asset is made from: the partition's files it reads (its graph dependencies
follow them) and, for a table that is one query's result, the queries that query reads first. The
assets name them, with their sha256, in each materialisation's metadata (`assets/support/metadata.py`),
as a figure's lineage names them in the pack."""

from pipeline.analysis.judge.figures_table import INPUTS_BY_QUERY, TABLE_FILES
from pipeline.contracts import (
    ACCURACY_SUMMARY,
    ARM_FIGURES,
    CAPACITY,
    COST_PER_DECISION,
    ERROR_BREAKDOWN,
    ITL_HISTOGRAM,
    LATENCY_PERCENTILES,
    RAW_TIMINGS,
    SERVER_METRICS,
    SWEEP_REPLAY,
    SWEEP_SUMMARY,
    SWEEP_TIMINGS,
    THROUGHPUT,
    THROUGHPUT_BUCKETS,
)
from pipeline.pack.assemble.lineage_steps import LATENCY_STEPS, THROUGHPUT_STEPS

# the steady-state window every analysis table is read over: its spans and tests, then the marked requests
STEADY_REQUESTS = ("steady_bins", "steady_requests")

# what each table of `analysis_tables` is read from: only the cost needs the accuracy (a useful
# decision is correct where scored), so only it depends on accuracy_summary in the graph
TABLE_INPUTS = {
    LATENCY_PERCENTILES: (RAW_TIMINGS, ITL_HISTOGRAM),  # the ITL histogram: written beside raw_timings
    THROUGHPUT: (RAW_TIMINGS,),
    THROUGHPUT_BUCKETS: (RAW_TIMINGS,),
    ERROR_BREAKDOWN: (RAW_TIMINGS,),
    COST_PER_DECISION: (RAW_TIMINGS, ACCURACY_SUMMARY),
}
# the queries each table's own query reads first (the chain a figure's lineage names in the pack:
# pipeline/pack/assemble/lineage_steps.py)
STAGED_QUERIES = {
    LATENCY_PERCENTILES: (*STEADY_REQUESTS, *LATENCY_STEPS),
    THROUGHPUT: (*STEADY_REQUESTS, *THROUGHPUT_STEPS),
    THROUGHPUT_BUCKETS: STEADY_REQUESTS,
    ERROR_BREAKDOWN: STEADY_REQUESTS,
    COST_PER_DECISION: STEADY_REQUESTS,
}
CAPACITY_INPUTS = (SWEEP_SUMMARY, SWEEP_REPLAY)  # the summary's rows and how the search ended
# the tables the figures are read from, then the files their lineage names (each figure's own
# `inputs_sha256` in the table: pipeline/analysis/judge/figures_table.py INPUTS_BY_QUERY)
FIGURES_INPUTS = tuple(
    dict.fromkeys(
        [*TABLE_FILES, CAPACITY, ARM_FIGURES, *(file for files in INPUTS_BY_QUERY.values() for file in files)]
    )
)
ENDPOINT_VIEW_INPUTS = (RAW_TIMINGS, SERVER_METRICS, THROUGHPUT, SWEEP_TIMINGS)
