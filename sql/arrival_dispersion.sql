-- arrival_dispersion: burstiness of the arrival counts at several bin widths ($bins_s).
-- Only whole bins from the first arrival count; empty bins count as zeros (kept analytically:
-- mean = Σc / N, variance = (Σc² − N·mean²) / (N − 1) over all N bins).
-- index_of_dispersion = variance / mean (1 for a Poisson process, > 1 bursty);
-- peak_to_mean = busiest bin / mean bin.
-- view: requests (canonical rows); params: $bins_s
WITH arrivals AS (
    SELECT epoch_us(arrival_at) AS arrival_us FROM requests
),
origin AS (
    SELECT min(arrival_us) AS first_us, max(arrival_us) AS last_us FROM arrivals
),
widths AS (
    SELECT unnest($bins_s) AS bin_s
),
whole_bins AS (
    SELECT bin_s, CAST(floor((last_us - first_us) / (bin_s * 1e6)) AS BIGINT) AS bins
    FROM widths, origin
),
counts AS (
    SELECT whole_bins.bin_s, whole_bins.bins,
           CAST(floor((arrival_us - first_us) / (whole_bins.bin_s * 1e6)) AS BIGINT) AS bin,
           count(*) AS requests
    FROM arrivals, origin, whole_bins
    WHERE arrival_us - first_us < whole_bins.bins * whole_bins.bin_s * 1e6
    GROUP BY ALL
),
moments AS (
    SELECT whole_bins.bin_s, whole_bins.bins,
           CAST(coalesce(sum(counts.requests), 0) AS BIGINT) AS total,
           CAST(coalesce(sum(counts.requests * counts.requests), 0) AS BIGINT) AS total_sq,
           coalesce(max(counts.requests), 0) AS peak
    FROM whole_bins
    LEFT JOIN counts USING (bin_s)
    GROUP BY ALL
)
SELECT
    bin_s,
    bins,
    total / nullif(bins, 0) AS mean_requests,
    (total_sq - bins * (total / nullif(bins, 0)) ** 2) / nullif(bins - 1, 0) AS variance_requests,
    ((total_sq - bins * (total / nullif(bins, 0)) ** 2) / nullif(bins - 1, 0))
        / nullif(total / nullif(bins, 0), 0) AS index_of_dispersion,
    peak / nullif(total / nullif(bins, 0), 0) AS peak_to_mean
FROM moments
ORDER BY bin_s
