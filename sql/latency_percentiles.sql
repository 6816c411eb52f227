-- latency_percentiles: TTFT, TPOT, ITL and E2E percentiles per candidate and scope (all, or one
-- prompt-length bucket) over the steady-state window, successful requests only, each with n and
-- a distribution-free confidence interval. The ranks (view `ranks`: point = nearest rank, low /
-- high = the order statistics bracketing the quantile, exact binomial, NULL where the run is too
-- short to bound it) come from pipeline.analysis.statistics.stats.order_statistic_ranks, widened where
-- the run's send-time batches show dependence (pipeline/analysis/statistics/dependence.py: the method
-- that set them is `interval_method`). Each rank is located in
-- the histogram (its before_bin: the values of the lower bins), then only the values of the bins
-- holding a wanted rank are sorted: exact order statistics without sorting every value. Those
-- values come from latency_bin_values, staged with every bin the ranks can reach (pipeline/
-- analysis/tabulate/tables.py re-stages it should a widened rank fall outside). An ITL bin is one whole
-- microsecond (itl_histogram), so an ITL order statistic is its bin in ms: exact to 1 µs,
-- nothing sorted.
-- staged: latency_histogram, latency_bin_values; view: ranks
WITH wanted AS (
    SELECT DISTINCT candidate, metric, scope, rank
    FROM ranks UNPIVOT (rank FOR kind IN (point_rank, low_rank, high_rank))
),
located AS (
    SELECT wanted.candidate, wanted.metric, wanted.scope, histogram.scope_order, wanted.rank, histogram.bin,
           wanted.rank - histogram.before_bin AS rank_in_bin
    FROM wanted
    JOIN latency_histogram AS histogram
        ON wanted.candidate = histogram.candidate
       AND wanted.metric = histogram.metric
       AND wanted.scope = histogram.scope
       AND wanted.rank > histogram.before_bin
       AND wanted.rank <= histogram.before_bin + histogram.values_in_bin
),
needed_bins AS (
    SELECT DISTINCT candidate, metric, scope, bin FROM located
    WHERE metric <> 'itl_ms'
),
in_needed_bins AS (
    SELECT needed_bins.candidate, needed_bins.metric, needed_bins.scope, needed_bins.bin, bin_values.value
    FROM latency_bin_values AS bin_values
    JOIN needed_bins
        ON bin_values.candidate = needed_bins.candidate
       AND bin_values.metric = needed_bins.metric
       AND bin_values.scope = needed_bins.scope
       AND bin_values.bin = needed_bins.bin
),
sorted_bins AS (
    -- each needed bin's values in order (a sort per bin, cheaper than one window over them all)
    SELECT candidate, metric, scope, bin, list_sort(list(value)) AS bin_values
    FROM in_needed_bins
    GROUP BY candidate, metric, scope, bin
),
order_statistics AS (
    SELECT
        located.candidate, located.metric, located.scope, located.rank,
        sorted_bins.bin_values[CAST(located.rank_in_bin AS BIGINT)] AS value
    FROM located
    JOIN sorted_bins USING (candidate, metric, scope, bin)
    UNION ALL
    SELECT candidate, metric, scope, rank, bin / 1000.0 AS value
    FROM located
    WHERE metric = 'itl_ms'
)
SELECT
    ranks.candidate,
    ranks.metric,
    ranks.scope,
    ranks.percentile,
    ranks.q,
    ranks.n,
    point.value AS value,
    low.value AS ci_low,
    high.value AS ci_high,
    ranks.point_rank,
    ranks.low_rank,
    ranks.high_rank,
    ranks.confidence,
    ranks.sample_every,
    ranks.interval_method,
    ranks.design_effect
FROM ranks
LEFT JOIN order_statistics AS point
    ON ranks.candidate = point.candidate AND ranks.metric = point.metric
   AND ranks.scope = point.scope AND ranks.point_rank = point.rank
LEFT JOIN order_statistics AS low
    ON ranks.candidate = low.candidate AND ranks.metric = low.metric
   AND ranks.scope = low.scope AND ranks.low_rank = low.rank
LEFT JOIN order_statistics AS high
    ON ranks.candidate = high.candidate AND ranks.metric = high.metric
   AND ranks.scope = high.scope AND ranks.high_rank = high.rank
ORDER BY ranks.candidate, ranks.metric, ranks.scope_order, ranks.q
