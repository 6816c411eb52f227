-- arrival_rate: requests per second over time, in bins of $bin_s seconds from the first
-- arrival; empty bins included (a lull is part of the arrival process).
-- view: requests (canonical rows); params: $bin_s
WITH arrivals AS (
    SELECT epoch_us(arrival_at) AS arrival_us FROM requests
),
origin AS (
    SELECT min(arrival_us) AS first_us, max(arrival_us) AS last_us FROM arrivals
),
binned AS (
    SELECT CAST(floor((arrival_us - first_us) / ($bin_s * 1e6)) AS BIGINT) AS bin, count(*) AS requests
    FROM arrivals, origin
    GROUP BY bin
),
all_bins AS (
    SELECT range AS bin
    FROM origin, range(CAST(floor((last_us - first_us) / ($bin_s * 1e6)) AS BIGINT) + 1)
)
SELECT
    all_bins.bin * $bin_s AS bin_start_s,
    coalesce(binned.requests, 0) AS requests,
    coalesce(binned.requests, 0) / $bin_s AS rate_per_s
FROM all_bins
LEFT JOIN binned USING (bin)
ORDER BY bin_start_s
