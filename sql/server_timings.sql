-- server_timings: per candidate and request kind, the client's TTFT and TPOT beside the server's
-- own account of the same requests (llama.cpp's per-request `timings`: the prompt's prefill
-- milliseconds, the decode milliseconds per token decoded) and the client − server gap. The TTFT
-- gap is what the server's prefill clock does not see: the HTTP path both ways, the wait for a
-- free slot, tokenizing and templating the request, and the first token's own decode step; the
-- TPOT gap is what streaming adds per token. Successful production requests of the steady window
-- whose server sent timings; no rows for a server that sends none. The kind is the reply's: a
-- tool call, a structured (JSON) answer, reasoning before the answer, or text.
-- Read from raw_timings itself (the staged steady_requests keeps only the columns the figures
-- read), inside each candidate's steady window as staged.
-- staged: steady_requests, steady_windows
WITH timed AS (
    SELECT
        raw_timings.candidate,
        CASE
            WHEN raw_timings.tool_call_valid IS NOT NULL THEN 'tool call'
            WHEN raw_timings.structured_output_valid IS NOT NULL THEN 'structured output'
            WHEN coalesce(raw_timings.reasoning_chunks, 0) > 0 THEN 'reasoning'
            ELSE 'text'
        END AS request_kind,
        raw_timings.ttft_ms,
        raw_timings.tpot_ms,
        raw_timings.server_prompt_ms,
        raw_timings.server_predicted_ms / nullif(raw_timings.server_predicted_n, 0) AS server_tpot_ms,
        CAST(coalesce(raw_timings.server_cache_n, 0) > 0 AS INTEGER) AS cache_hit
    FROM raw_timings
    JOIN steady_windows
        ON raw_timings.candidate = steady_windows.candidate
        AND raw_timings.load_level IS NOT DISTINCT FROM steady_windows.load_level
    WHERE raw_timings.labelled_item_id IS NULL
        AND raw_timings.t_sent_ns BETWEEN steady_windows.window_start_ns AND steady_windows.window_end_ns
        AND raw_timings.status = 'ok'
        AND raw_timings.server_prompt_ms IS NOT NULL
        AND raw_timings.ttft_ms IS NOT NULL
)
SELECT
    candidate,
    request_kind,
    count(*) AS requests,
    CAST(sum(cache_hit) AS BIGINT) AS requests_with_cache_hit,
    median(ttft_ms) AS client_ttft_ms_p50,
    median(server_prompt_ms) AS server_prompt_ms_p50,
    median(ttft_ms - server_prompt_ms) AS ttft_gap_ms_p50,
    quantile_cont(ttft_ms - server_prompt_ms, 0.95) AS ttft_gap_ms_p95,
    median(tpot_ms) AS client_tpot_ms_p50,
    median(server_tpot_ms) AS server_tpot_ms_p50,
    median(tpot_ms - server_tpot_ms) AS tpot_gap_ms_p50
FROM timed
GROUP BY candidate, request_kind
ORDER BY candidate, request_kind
