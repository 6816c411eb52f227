-- prompt_profile: token-length quantiles, structure shares and arrival process of a request set.
-- view: requests (canonical rows with window_offset_s)
WITH ordered AS (
    SELECT
        *,
        window_offset_s - lag(window_offset_s) OVER (ORDER BY window_offset_s) AS interarrival_s,
        json_array_length(messages_json) AS message_count,
        messages_json->>'$[0].role' AS first_role
    FROM requests
),
summary AS (
    SELECT
        count(*) AS requests,
        max(window_offset_s) - min(window_offset_s) AS span_s,
        quantile_cont(prompt_tokens, 0.5) AS prompt_tokens_p50,
        quantile_cont(prompt_tokens, 0.9) AS prompt_tokens_p90,
        quantile_cont(prompt_tokens, 0.99) AS prompt_tokens_p99,
        avg(prompt_tokens) AS prompt_tokens_mean,
        max(prompt_tokens) AS prompt_tokens_max,
        quantile_cont(output_tokens, 0.5) AS output_tokens_p50,
        quantile_cont(output_tokens, 0.9) AS output_tokens_p90,
        quantile_cont(output_tokens, 0.99) AS output_tokens_p99,
        avg(output_tokens) AS output_tokens_mean,
        max(output_tokens) AS output_tokens_max,
        avg(interarrival_s) AS interarrival_mean_s,
        stddev_samp(interarrival_s) / nullif(avg(interarrival_s), 0) AS interarrival_cv,
        avg(CASE WHEN message_count > 2 THEN 1.0 ELSE 0.0 END) AS share_multi_turn,
        avg(CASE WHEN first_role = 'system' THEN 1.0 ELSE 0.0 END) AS share_system_prompted
    FROM ordered
)
SELECT
    *,
    (requests - 1) / nullif(span_s, 0) AS arrival_rate_per_s
FROM summary
