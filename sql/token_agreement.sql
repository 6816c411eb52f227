-- token_agreement: where the server's usage and the client's own count disagree, and by how much
-- (successful requests that reported usage; the client count uses loadproof's tokenizer).
-- view: raw_timings
WITH compared AS (
    SELECT
        candidate,
        output_tokens - output_tokens_client AS output_diff,
        prompt_tokens - prompt_tokens_client AS prompt_diff
    FROM raw_timings
    WHERE status = 'ok' AND usage_reported
)
SELECT
    candidate,
    count(*) AS requests_compared,
    count(*) FILTER (WHERE output_diff <> 0) AS output_disagreeing,
    quantile_disc(abs(output_diff), 0.5) AS output_abs_diff_p50,
    max(abs(output_diff)) AS output_abs_diff_max,
    count(*) FILTER (WHERE prompt_diff <> 0) AS prompt_disagreeing,
    quantile_disc(abs(prompt_diff), 0.5) AS prompt_abs_diff_p50,
    max(abs(prompt_diff)) AS prompt_abs_diff_max
FROM compared
GROUP BY candidate
ORDER BY candidate
