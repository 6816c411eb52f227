-- latency_batch_counts: for each percentile's point estimate (view `points`: candidate, metric,
-- scope, scope_order, q, value), how many values of each send-time batch lie at or below it
-- (`below`) and how many the batch holds (`total`): what the batch-means standard error of the
-- empirical CDF at the point is made of (pipeline/analysis/dependence.py, Woodruff's interval).
-- TTFT, TPOT and E2E count the steady requests' values; ITL counts whole-µs gaps from the
-- histogram, every gap in the batch of its request's send time (so the gaps of one request, which
-- move together, stay in one batch). A batch with no values is simply absent.
-- view: latency_samples; staged: itl_histogram (or bound to data/itl_histogram.parquet); view: points
WITH request_counts AS (
    SELECT
        points.candidate,
        points.metric,
        points.scope,
        points.q,
        samples.batch,
        count(*) FILTER (WHERE samples.value <= points.value) AS below,
        count(*) AS total
    FROM points
    JOIN latency_samples AS samples
        ON points.candidate = samples.candidate
       AND points.metric = samples.metric
       AND (points.scope_order = -1 OR points.scope_order = samples.prompt_bucket_lower)
    WHERE points.metric <> 'itl_ms'
    GROUP BY ALL
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
