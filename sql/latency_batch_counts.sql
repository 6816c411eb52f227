-- latency_batch_counts: for each percentile's point estimate (view `points`: candidate, metric,
-- scope, scope_order, q, value), how many values of each send-time batch lie at or below it
-- (`below`) and how many the batch holds (`total`): what the batch-means standard error of the
-- empirical CDF at the point is made of (pipeline/analysis/statistics/dependence.py, Woodruff's interval).
-- TTFT, TPOT and E2E count the steady requests' values through their sqrt bins (whole bins below
-- the point counted, only the point's own bin compared value by value, its values read from
-- latency_bin_values, which holds every bin a point lies in: 22 s → 2.5 s → 1 s at 10 M
-- requests); ITL counts whole-µs gaps from the histogram, every gap in the batch of its
-- request's send time (so the gaps of one request, which move together, stay in one batch). A
-- batch with no values is simply absent. Bound with each interval's low end as the value instead
-- (low_ends), the same counts give the standard error at that end, where the test is inverted to
-- move the low end down (pipeline/analysis/tabulate/tables.py). The word low_ends here is what
-- tells the analysis so: a pack's copy of this query written before it kept Woodruff's low end.
-- staged: latency_batch_bins, latency_bin_values, itl_histogram (or bound to
-- data/itl_histogram.parquet); view: points
WITH point_bins AS (
    -- each point in latency_samples' histogram bin (floor(sqrt(value) · 512), as it bins values)
    SELECT
        candidate, metric, scope, scope_order, q, value,
        CAST(floor(sqrt(greatest(value, 0)) * 512.0) AS BIGINT) AS bin
    FROM points
    WHERE metric <> 'itl_ms'
),
below_the_bin AS (
    -- every value of a lower bin is below the point; the batch's total too
    SELECT
        point_bins.candidate,
        point_bins.metric,
        point_bins.scope,
        point_bins.q,
        batch_bins.batch,
        coalesce(sum(batch_bins.values_in_bin) FILTER (WHERE batch_bins.bin < point_bins.bin), 0) AS below_bin,
        sum(batch_bins.values_in_bin) AS total
    FROM point_bins
    JOIN latency_batch_bins AS batch_bins
        ON point_bins.candidate = batch_bins.candidate
       AND point_bins.metric = batch_bins.metric
       AND (point_bins.scope_order = -1 OR point_bins.scope_order = batch_bins.prompt_bucket_lower)
    GROUP BY ALL
),
in_the_bin AS (
    -- inside the point's own bin, the values at or below it: only that bin's values are compared
    SELECT
        point_bins.candidate,
        point_bins.metric,
        point_bins.scope,
        point_bins.q,
        bin_values.batch,
        count(*) AS below_in_bin
    FROM point_bins
    JOIN latency_bin_values AS bin_values
        ON point_bins.candidate = bin_values.candidate
       AND point_bins.metric = bin_values.metric
       AND point_bins.scope = bin_values.scope
       AND point_bins.bin = bin_values.bin
    WHERE bin_values.value <= point_bins.value
    GROUP BY ALL
),
request_counts AS (
    SELECT
        below_the_bin.candidate,
        below_the_bin.metric,
        below_the_bin.scope,
        below_the_bin.q,
        below_the_bin.batch,
        below_the_bin.below_bin + coalesce(in_the_bin.below_in_bin, 0) AS below,
        below_the_bin.total
    FROM below_the_bin
    LEFT JOIN in_the_bin USING (candidate, metric, scope, q, batch)
),
gap_counts AS (
    SELECT
        points.candidate,
        points.metric,
        points.scope,
        points.q,
        gaps.batch,
        coalesce(sum(gaps.gaps) FILTER (WHERE gaps.gap_us <= round(points.value * 1000.0)), 0) AS below,
        sum(gaps.gaps) AS total
    FROM points
    JOIN itl_histogram AS gaps
        ON points.candidate = gaps.candidate
       AND gaps.in_steady_window
       AND (points.scope_order = -1 OR points.scope_order = gaps.prompt_bucket_lower)
    WHERE points.metric = 'itl_ms'
    GROUP BY ALL
)
SELECT candidate, metric, scope, q, batch, CAST(below AS BIGINT) AS below, CAST(total AS BIGINT) AS total
FROM request_counts
UNION ALL
SELECT candidate, metric, scope, q, batch, CAST(below AS BIGINT) AS below, CAST(total AS BIGINT) AS total
FROM gap_counts
ORDER BY candidate, metric, scope, q, batch
