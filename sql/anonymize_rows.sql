-- anonymize_rows: the canonical rows `loadproof anonymize` turns into trace lines, in arrival
-- order (then file and line, the order every profile query breaks ties in), with the arrival as
-- microseconds since the log's first arrival. Text and identifiers are hashed or dropped in Python.
-- view: requests (canonical rows)
SELECT
    epoch_us(arrival_at) - min(epoch_us(arrival_at)) OVER () AS offset_us,
    prompt_tokens,
    output_tokens,
    tenant,
    route,
    session_id,
    logged_latency_ms,
    logged_ttft_ms,
    structured_output,
    messages_json,
    prefix_hashes
FROM requests
ORDER BY epoch_us(arrival_at), source_file, source_line
