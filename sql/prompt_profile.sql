-- prompt_profile: token-length quantiles, structure shares and arrival process of a request set
-- (the production sample, or a whole canonical log). Shares are NULL when the log cannot tell
-- (no message text, no request options). Tools, JSON schema and reasoning shares read the
-- logged request fields (reasoning: reasoning_effort, thinking or
-- chat_template_kwargs.enable_thinking), NULL when no request carries any. Arrival order: arrival
-- time, then file and line.
-- view: requests (canonical rows); params: $long_context_tokens
WITH ordered AS (
    SELECT
        prompt_tokens,
        output_tokens,
        structured_output,
        -- what the request asked of the server (its logged request_fields)
        coalesce(json_array_length(request_fields, '$.tools') > 0, FALSE)
        OR coalesce(json_array_length(request_fields, '$.functions') > 0, FALSE) AS has_tools,
        coalesce(request_fields ->> '$.response_format.type' = 'json_schema', FALSE) AS has_json_schema,
        coalesce(
            json_exists(request_fields, '$.reasoning_effort')
            OR json_exists(request_fields, '$.thinking')
            OR json_exists(request_fields, '$.chat_template_kwargs.enable_thinking'),
            FALSE
        ) AS has_reasoning_setting,
        request_fields IS NOT NULL AS has_request_fields,
        epoch_us(arrival_at) AS arrival_us,
        (
            epoch_us(arrival_at)
            - lag(epoch_us(arrival_at)) OVER (ORDER BY epoch_us(arrival_at), source_file, source_line)
        ) / 1e6 AS interarrival_s,
        CASE WHEN messages_json IS NOT NULL THEN json_extract_string(messages_json, '$[*].role') END AS roles
    FROM requests
),
shaped AS (
    SELECT
        *,
        CASE WHEN roles IS NOT NULL THEN
            len(list_filter(roles, lambda r: r = 'user')) > 1 OR list_contains(roles, 'assistant')
        END AS is_multi_turn,
        CASE WHEN roles IS NOT NULL THEN roles[1] IN ('system', 'developer') END AS is_system_prompted
    FROM ordered
),
summary AS (
    SELECT
        count(*) AS requests,
        (max(arrival_us) - min(arrival_us)) / 1e6 AS span_s,
        quantile_cont(prompt_tokens, [0.25, 0.5, 0.75, 0.9, 0.95, 0.99]) AS prompt_q,
        avg(prompt_tokens) AS prompt_tokens_mean,
        stddev_samp(prompt_tokens) AS prompt_tokens_stddev,
        min(prompt_tokens) AS prompt_tokens_min,
        max(prompt_tokens) AS prompt_tokens_max,
        quantile_cont(output_tokens, [0.25, 0.5, 0.75, 0.9, 0.95, 0.99]) AS output_q,
        avg(output_tokens) AS output_tokens_mean,
        stddev_samp(output_tokens) AS output_tokens_stddev,
        min(output_tokens) AS output_tokens_min,
        max(output_tokens) AS output_tokens_max,
        avg(interarrival_s) AS interarrival_mean_s,
        stddev_samp(interarrival_s) / nullif(avg(interarrival_s), 0) AS interarrival_cv,
        avg(CAST(is_multi_turn AS DOUBLE)) AS share_multi_turn,
        avg(CAST(is_system_prompted AS DOUBLE)) AS share_system_prompted,
        avg(CAST(structured_output AS DOUBLE)) AS share_structured_output,
        -- NULL when no request of the set carries request fields (the log cannot tell)
        CASE WHEN bool_or(has_request_fields) THEN avg(CAST(has_tools AS DOUBLE)) END AS share_with_tools,
        CASE WHEN bool_or(has_request_fields) THEN avg(CAST(has_json_schema AS DOUBLE)) END AS share_json_schema,
        CASE WHEN bool_or(has_request_fields) THEN avg(CAST(has_reasoning_setting AS DOUBLE)) END
            AS share_reasoning_setting,
        avg(CASE WHEN prompt_tokens >= $long_context_tokens THEN 1.0 ELSE 0.0 END) AS share_long_context,
        count(roles) / count(*) AS share_with_text
    FROM shaped
)
SELECT
    requests,
    span_s,
    prompt_q[1] AS prompt_tokens_p25,
    prompt_q[2] AS prompt_tokens_p50,
    prompt_q[3] AS prompt_tokens_p75,
    prompt_q[4] AS prompt_tokens_p90,
    prompt_q[5] AS prompt_tokens_p95,
    prompt_q[6] AS prompt_tokens_p99,
    prompt_tokens_mean,
    prompt_tokens_stddev,
    prompt_tokens_min,
    prompt_tokens_max,
    output_q[1] AS output_tokens_p25,
    output_q[2] AS output_tokens_p50,
    output_q[3] AS output_tokens_p75,
    output_q[4] AS output_tokens_p90,
    output_q[5] AS output_tokens_p95,
    output_q[6] AS output_tokens_p99,
    output_tokens_mean,
    output_tokens_stddev,
    output_tokens_min,
    output_tokens_max,
    interarrival_mean_s,
    interarrival_cv,
    share_multi_turn,
    share_system_prompted,
    share_structured_output,
    share_with_tools,
    share_json_schema,
    share_reasoning_setting,
    share_long_context,
    share_with_text,
    $long_context_tokens AS long_context_tokens,
    (requests - 1) / nullif(span_s, 0) AS arrival_rate_per_s
FROM summary
