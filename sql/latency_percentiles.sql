-- latency_percentiles: TTFT, TPOT, ITL and E2E percentiles per candidate and scope (all, or one
-- prompt-length bucket) over the steady-state window, successful requests only, each with n and
-- a distribution-free confidence interval. The ranks (view `ranks`: point = nearest rank, low /
-- high = the order statistics bracketing the quantile, exact binomial, NULL where the run is too
-- short to bound it) come from pipeline.analysis.stats.order_statistic_ranks, widened where
-- the run's send-time batches show dependence (pipeline/analysis/dependence.py: the method
-- that set them is `interval_method`). Each rank is located in
-- the histogram, then only the values of the bins holding a wanted rank are sorted: exact order
-- statistics without sorting every value. An ITL bin is one whole microsecond (itl_histogram),
-- so an ITL order statistic is its bin in ms: exact to 1 µs, nothing sorted.
-- staged: latency_histogram; view: latency_samples; view: ranks
WITH wanted AS (
    SELECT DISTINCT candidate, metric, scope, rank
    FROM ranks UNPIVOT (rank FOR kind IN (point_rank, low_rank, high_rank))
),
cumulative AS (
    SELECT
        candidate, metric, scope, scope_order, bin, values_in_bin,
        sum(values_in_bin) OVER (PARTITION BY candidate, metric, scope ORDER BY bin) - values_in_bin AS before_bin
    FROM latency_histogram
),
located AS (
    SELECT wanted.candidate, wanted.metric, wanted.scope, cumulative.scope_order, wanted.rank, cumulative.bin,
           wanted.rank - cumulative.before_bin AS rank_in_bin
    FROM wanted
    JOIN cumulative
        ON wanted.candidate = cumulative.candidate
       AND wanted.metric = cumulative.metric
       AND wanted.scope = cumulative.scope
       AND wanted.rank > cumulative.before_bin
       AND wanted.rank <= cumulative.before_bin + cumulative.values_in_bin
),
needed_bins AS (
    SELECT DISTINCT candidate, metric, scope, scope_order, bin FROM located
    WHERE metric <> 'itl_ms'
),
in_needed_bins AS (
    SELECT needed_bins.candidate, needed_bins.metric, needed_bins.scope, needed_bins.bin, samples.value
    FROM latency_samples AS samples
    JOIN needed_bins
        ON samples.candidate = needed_bins.candidate
       AND samples.metric = needed_bins.metric
       AND samples.bin = needed_bins.bin
    WHERE needed_bins.scope_order = -1 OR needed_bins.scope_order = samples.prompt_bucket_lower
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
