-- prefix_cache_hits: per candidate, the prefix-cache hit rate the server reported: its cached
-- prompt tokens (usage.prompt_tokens_details.cached_tokens) over the prompt tokens of the same
-- requests, successful ones sent in the steady-state window. Only requests whose server reported
-- cached_tokens count; a candidate whose server never did gets a NULL rate (not 0: unknown).
-- The ceiling to read it against is the profile's prefix-reuse share (prompt blocks sent before).
-- staged: steady_requests
SELECT
    candidate,
    count(*) FILTER (WHERE in_steady_window AND status = 'ok') AS requests_ok,
    count(*) FILTER (WHERE in_steady_window AND status = 'ok' AND cached_tokens IS NOT NULL)
        AS requests_reporting,
    CAST(coalesce(
        sum(cached_tokens) FILTER (WHERE in_steady_window AND status = 'ok' AND cached_tokens IS NOT NULL), 0
    ) AS BIGINT) AS cached_tokens,
    CAST(coalesce(
        sum(prompt_tokens_any) FILTER (WHERE in_steady_window AND status = 'ok' AND cached_tokens IS NOT NULL), 0
    ) AS BIGINT) AS prompt_tokens,
    sum(cached_tokens) FILTER (WHERE in_steady_window AND status = 'ok' AND cached_tokens IS NOT NULL)
    / nullif(
        sum(prompt_tokens_any) FILTER (WHERE in_steady_window AND status = 'ok' AND cached_tokens IS NOT NULL), 0
    ) AS hit_rate
FROM steady_requests
GROUP BY candidate
ORDER BY candidate
