-- latency_batch_bins: the steady requests' TTFT, TPOT and E2E values (and TTFT, E2E from the
-- schedule) counted per candidate, metric, prompt-length bucket, send-time batch and histogram
-- bin (latency_samples' floor(sqrt(value) · 512)): one pass over the values, staged, that both
-- latency_histogram (summed over batches) and latency_batch_counts (per batch) read.
-- view: latency_samples
SELECT
    candidate,
    metric,
    prompt_bucket_lower,
    any_value(prompt_bucket_upper) AS prompt_bucket_upper,
    batch,
    bin,
    count(*) AS values_in_bin
FROM latency_samples
GROUP BY candidate, metric, prompt_bucket_lower, batch, bin
