-- prompt_length_histogram: prompt and output token lengths in power-of-two bins
-- [2^k, 2^(k+1)), with each bin's request count and share.
-- view: requests (canonical rows)
WITH lengths AS (
    SELECT 'prompt_tokens' AS kind, prompt_tokens AS tokens FROM requests
    UNION ALL
    SELECT 'output_tokens' AS kind, output_tokens AS tokens FROM requests
),
binned AS (
    SELECT kind, CAST(floor(log2(tokens)) AS INTEGER) AS power
    FROM lengths
),
counted AS (
    SELECT kind, power, count(*) AS requests
    FROM binned
    GROUP BY kind, power
)
SELECT
    kind,
    CAST(2 ** power AS BIGINT) AS bin_low,
    CAST(2 ** (power + 1) AS BIGINT) AS bin_high,
    requests,
    requests / sum(requests) OVER (PARTITION BY kind) AS share
FROM counted
ORDER BY kind DESC, bin_low ASC
