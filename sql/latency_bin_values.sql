-- latency_bin_values: every TTFT, TPOT and E2E value (and TTFT, E2E from the schedule), with its
-- send-time batch, of each histogram bin that holds a rank in a span of `rank_spans` (candidate,
-- metric, scope, first_rank, last_rank: pipeline/analysis/intervals.py `rank_spans`, the ranks an
-- interval may end at, with room for the batch-means widening), per candidate, metric and scope.
-- One pass over the values, staged: latency_percentiles sorts the bins it needs from here (twice
-- when the intervals are widened) and latency_batch_counts compares the values of each point's
-- own bin, instead of each reading every value again. ITL needs none: its bins are whole µs.
-- staged: latency_histogram; view: latency_samples; view: rank_spans
WITH wanted_bins AS (
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
SELECT wanted_bins.candidate, wanted_bins.metric, wanted_bins.scope, wanted_bins.bin, samples.batch, samples.value
FROM latency_samples AS samples
JOIN wanted_bins
    ON samples.candidate = wanted_bins.candidate
   AND samples.metric = wanted_bins.metric
   AND samples.bin = wanted_bins.bin
WHERE wanted_bins.scope_order = -1 OR wanted_bins.scope_order = samples.prompt_bucket_lower
