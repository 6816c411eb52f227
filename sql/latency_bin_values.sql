-- latency_bin_values: every TTFT, TTFO, TPOT and E2E value (and TTFT, E2E from the schedule), with its
-- send-time batch, of each histogram bin that holds a rank in a span of `rank_spans` (candidate,
-- metric, scope, first_rank, last_rank: pipeline/analysis/statistics/intervals.py `rank_spans`, the ranks an
-- interval may end at, with room for the batch-means widening), per candidate, metric and scope.
-- One pass over the values, staged: latency_percentiles sorts the bins it needs from here (twice
-- when the intervals are widened) and latency_batch_counts compares the values of each point's
-- own bin, instead of each reading every value again. ITL needs none: its bins are whole µs.
-- Each metric is matched on its own column (binned as latency_samples bins it), not as unpivoted
-- rows keyed by metric: a smaller join per metric.
-- The values of one metric are gathered once, as the table macro bin_values_of(metric_name,
-- metric_value) defined first in this file, each call joining only its metric's wanted bins (a
-- macro parameter replaces every identifier of its name in the body; noqa CP05: sqlfluff parses a
-- macro's untyped parameter names as data types).
-- staged: steady_requests, latency_histogram; view: rank_spans
CREATE OR REPLACE TEMP MACRO bin_values_of(metric_name, metric_value) AS TABLE  -- noqa: CP05
WITH wanted_bins AS (
    SELECT DISTINCT histogram.candidate, histogram.metric, histogram.scope, histogram.scope_order, histogram.bin
    FROM rank_spans AS spans
    JOIN latency_histogram AS histogram
        ON spans.candidate = histogram.candidate
       AND spans.metric = histogram.metric
       AND spans.scope = histogram.scope
       AND spans.first_rank <= histogram.before_bin + histogram.values_in_bin
       AND spans.last_rank > histogram.before_bin
    WHERE spans.metric = metric_name
)
SELECT
    wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin,
    steady.batch, metric_value AS value
FROM steady_requests AS steady
JOIN wanted_bins
    ON steady.candidate = wanted_bins.candidate
   AND CAST(floor(sqrt(greatest(metric_value, 0)) * 512.0) AS BIGINT) = wanted_bins.bin
WHERE steady.in_steady_window AND steady.status = 'ok'
  AND metric_value IS NOT NULL
  AND (wanted_bins.scope_order = -1 OR wanted_bins.scope_order = steady.prompt_bucket_lower);

SELECT * FROM bin_values_of('ttft_ms', ttft_ms)
UNION ALL
SELECT * FROM bin_values_of('tpot_ms', tpot_ms)
UNION ALL
SELECT * FROM bin_values_of('e2e_ms', e2e_ms)
UNION ALL
SELECT * FROM bin_values_of('ttft_from_schedule_ms', ttft_from_schedule_ms)
UNION ALL
SELECT * FROM bin_values_of('e2e_from_schedule_ms', e2e_from_schedule_ms)
UNION ALL
SELECT * FROM bin_values_of('ttfo_ms', ttfo_ms)
