-- ingest_canonical: the canonical request log, one row per log line, with the reason the line
-- goes to the quarantine (NULL when it is accepted). Every format's *_fields query feeds it.
-- view: log_fields(file_id, source_line, raw, problem, request_id, arrival_raw, arrival_kind,
--                  prompt_raw, output_raw, tenant, route, latency_raw, messages_json,
--                  structured_output, prefix_hashes, session_id)
-- params: $timezone (for timestamps written without one), $origin (TIMESTAMPTZ of offset 0),
--         $unit_us (microseconds per arrival number), $arrival_field, $prompt_field,
--         $output_field, $latency_field (the source's field names, for the reasons)
WITH numbers AS (
    SELECT
        *,
        try_cast(prompt_raw AS DOUBLE) AS prompt_number,
        try_cast(output_raw AS DOUBLE) AS output_number,
        try_cast(latency_raw AS DOUBLE) AS latency_number,
        CASE WHEN arrival_kind = 'number' THEN try_cast(arrival_raw AS DOUBLE) END AS arrival_number
    FROM log_fields
),
arrivals AS (
    SELECT
        *,
        CASE
            WHEN arrival_kind = 'number' THEN
                CAST($origin AS TIMESTAMPTZ) + to_microseconds(CAST(round(arrival_number * $unit_us) AS BIGINT))
            WHEN regexp_matches(arrival_raw, '([Zz]|[+-]\d\d(:?\d\d)?)$') THEN try_cast(arrival_raw AS TIMESTAMPTZ)
            ELSE timezone($timezone, try_cast(arrival_raw AS TIMESTAMP))
        END AS arrival_at
    FROM numbers
),
judged AS (
    SELECT
        *,
        CASE
            WHEN problem IS NOT NULL THEN problem
            WHEN arrival_raw IS NULL THEN format('field {}: missing', $arrival_field)
            WHEN arrival_at IS NULL AND arrival_kind = 'number'
                THEN format('field {}: not a number: {}', $arrival_field, left(arrival_raw, 40))
            WHEN arrival_at IS NULL
                THEN format('field {}: not ISO-8601: {}', $arrival_field, left(arrival_raw, 40))
            WHEN prompt_raw IS NULL THEN format('field {}: missing', $prompt_field)
            WHEN prompt_number IS NULL OR prompt_number < 1 OR prompt_number <> floor(prompt_number)
                THEN format('field {}: must be an integer ≥ 1, got {}', $prompt_field, left(prompt_raw, 40))
            WHEN output_raw IS NULL THEN format('field {}: missing', $output_field)
            WHEN output_number IS NULL OR output_number < 1 OR output_number <> floor(output_number)
                THEN format('field {}: must be an integer ≥ 1, got {}', $output_field, left(output_raw, 40))
            WHEN latency_raw IS NOT NULL AND (latency_number IS NULL OR latency_number < 0)
                THEN format('field {}: must be a number ≥ 0, got {}', $latency_field, left(latency_raw, 40))
        END AS reject_reason
    FROM arrivals
)
SELECT
    request_id,
    arrival_at,
    messages_json,
    CAST(prompt_number AS BIGINT) AS prompt_tokens,
    CAST(output_number AS BIGINT) AS output_tokens,
    tenant,
    route,
    latency_number AS logged_latency_ms,
    structured_output,
    prefix_hashes,
    session_id,
    file_id,
    CAST(source_line AS BIGINT) AS source_line,
    reject_reason,
    CASE WHEN reject_reason IS NOT NULL THEN left(raw, 300) END AS raw
FROM judged
