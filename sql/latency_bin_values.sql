-- latency_bin_values: every TTFT, TTFO, TPOT and E2E value (and TTFT, E2E from the schedule), with its
-- send-time batch, of each histogram bin that holds a rank in a span of `rank_spans` (candidate,
-- metric, scope, first_rank, last_rank: pipeline/analysis/intervals.py `rank_spans`, the ranks an
-- interval may end at, with room for the batch-means widening), per candidate, metric and scope.
-- One pass over the values, staged: latency_percentiles sorts the bins it needs from here (twice
-- when the intervals are widened) and latency_batch_counts compares the values of each point's
-- own bin, instead of each reading every value again. ITL needs none: its bins are whole µs.
-- Each metric is matched on its own column (binned as latency_samples bins it), not as unpivoted
-- rows keyed by metric: a smaller join per metric.
-- staged: steady_requests, latency_histogram; view: rank_spans
WITH steady AS NOT MATERIALIZED (
    SELECT
        candidate, prompt_bucket_lower, batch,
        ttft_ms, tpot_ms, e2e_ms, ttft_from_schedule_ms, e2e_from_schedule_ms, ttfo_ms
    FROM steady_requests
    WHERE in_steady_window AND status = 'ok'
),
wanted_bins AS (
    SELECT DISTINCT histogram.candidate, histogram.metric, histogram.scope, histogram.scope_order, histogram.bin
    FROM rank_spans AS spans
    JOIN latency_histogram AS histogram
        ON spans.candidate = histogram.candidate
       AND spans.metric = histogram.metric
       AND spans.scope = histogram.scope
       AND spans.first_rank <= histogram.before_bin + histogram.values_in_bin
       AND spans.last_rank > histogram.before_bin
    WHERE spans.metric <> 'itl_ms'
)
SELECT
    wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin,
    steady.batch, steady.ttft_ms AS value
FROM steady
JOIN wanted_bins
    ON steady.candidate = wanted_bins.candidate
   AND wanted_bins.metric = 'ttft_ms'
   AND CAST(floor(sqrt(greatest(steady.ttft_ms, 0)) * 512.0) AS BIGINT) = wanted_bins.bin
WHERE steady.ttft_ms IS NOT NULL
  AND (wanted_bins.scope_order = -1 OR wanted_bins.scope_order = steady.prompt_bucket_lower)
UNION ALL
SELECT
    wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin,
    steady.batch, steady.tpot_ms AS value
FROM steady
JOIN wanted_bins
    ON steady.candidate = wanted_bins.candidate
   AND wanted_bins.metric = 'tpot_ms'
   AND CAST(floor(sqrt(greatest(steady.tpot_ms, 0)) * 512.0) AS BIGINT) = wanted_bins.bin
WHERE steady.tpot_ms IS NOT NULL
  AND (wanted_bins.scope_order = -1 OR wanted_bins.scope_order = steady.prompt_bucket_lower)
UNION ALL
SELECT
    wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin,
    steady.batch, steady.e2e_ms AS value
FROM steady
JOIN wanted_bins
    ON steady.candidate = wanted_bins.candidate
   AND wanted_bins.metric = 'e2e_ms'
   AND CAST(floor(sqrt(greatest(steady.e2e_ms, 0)) * 512.0) AS BIGINT) = wanted_bins.bin
WHERE steady.e2e_ms IS NOT NULL
  AND (wanted_bins.scope_order = -1 OR wanted_bins.scope_order = steady.prompt_bucket_lower)
UNION ALL
SELECT
    wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin,
    steady.batch, steady.ttft_from_schedule_ms AS value
FROM steady
JOIN wanted_bins
    ON steady.candidate = wanted_bins.candidate
   AND wanted_bins.metric = 'ttft_from_schedule_ms'
   AND CAST(floor(sqrt(greatest(steady.ttft_from_schedule_ms, 0)) * 512.0) AS BIGINT) = wanted_bins.bin
WHERE steady.ttft_from_schedule_ms IS NOT NULL
  AND (wanted_bins.scope_order = -1 OR wanted_bins.scope_order = steady.prompt_bucket_lower)
UNION ALL
SELECT
    wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin,
    steady.batch, steady.e2e_from_schedule_ms AS value
FROM steady
JOIN wanted_bins
    ON steady.candidate = wanted_bins.candidate
   AND wanted_bins.metric = 'e2e_from_schedule_ms'
   AND CAST(floor(sqrt(greatest(steady.e2e_from_schedule_ms, 0)) * 512.0) AS BIGINT) = wanted_bins.bin
WHERE steady.e2e_from_schedule_ms IS NOT NULL
  AND (wanted_bins.scope_order = -1 OR wanted_bins.scope_order = steady.prompt_bucket_lower)
UNION ALL
SELECT
    wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin,
    steady.batch, steady.ttfo_ms AS value
FROM steady
JOIN wanted_bins
    ON steady.candidate = wanted_bins.candidate
   AND wanted_bins.metric = 'ttfo_ms'
   AND CAST(floor(sqrt(greatest(steady.ttfo_ms, 0)) * 512.0) AS BIGINT) = wanted_bins.bin
WHERE steady.ttfo_ms IS NOT NULL
  AND (wanted_bins.scope_order = -1 OR wanted_bins.scope_order = steady.prompt_bucket_lower)
