-- ingest_canonical: the canonical request log, one row per log line, with the reason the line
-- goes to the quarantine (NULL when it is accepted). Every format's *_fields query feeds it.
-- macros: log_time, field_reason, structured_request (sql/ingest_macros.sql)
-- structured_output is the format's own, else read from the request fields.
-- view: log_fields (sql/ingest_log_fields.sql: file_id, source_line, record, raw, problem,
--       request_id, arrival_raw, arrival_kind, completed_raw, first_token_raw, prompt_raw,
--       output_raw, tenant, route, latency_raw, messages_json, structured_output, request_fields,
--       prefix_hashes, session_id)
-- record names the request inside its line when a line holds many (an OTLP span) or when the
-- "line" is a database row (its primary key); a reason then starts with it. completed_raw and
-- first_token_raw are times written as arrival_raw is (same kind and unit): the logged latency is
-- completed − arrival when the log has no latency field, the logged TTFT first token − arrival.
-- params: $timezone (for timestamps written without one), $origin (TIMESTAMPTZ of offset 0),
--         $unit_us (microseconds per arrival number), $arrival_field, $prompt_field,
--         $output_field, $latency_field, $completed_field, $first_token_field (the source's
--         field names, for the reasons), $echo_values (a reason quotes the bad value's first 40
--         characters: privacy.text keep; else it names the field only)
WITH numbers AS (
    SELECT
        *,
        try_cast(prompt_raw AS DOUBLE) AS prompt_number,
        try_cast(output_raw AS DOUBLE) AS output_number,
        try_cast(latency_raw AS DOUBLE) AS latency_number
    FROM log_fields
),
arrivals AS (
    SELECT
        *,
        log_time(arrival_kind, arrival_raw, $origin, $unit_us, $timezone) AS arrival_at,
        log_time(arrival_kind, completed_raw, $origin, $unit_us, $timezone) AS completed_at,
        log_time(arrival_kind, first_token_raw, $origin, $unit_us, $timezone) AS first_token_at
    FROM numbers
),
spans AS (
    SELECT
        *,
        coalesce(latency_number, (epoch_us(completed_at) - epoch_us(arrival_at)) / 1e3) AS logged_latency_ms,
        (epoch_us(first_token_at) - epoch_us(arrival_at)) / 1e3 AS logged_ttft_ms
    FROM arrivals
),
judged AS (
    SELECT
        *,
        CASE
            WHEN problem IS NOT NULL THEN problem
            WHEN arrival_raw IS NULL THEN format('field {}: missing', $arrival_field)
            WHEN arrival_at IS NULL AND arrival_kind = 'number'
                THEN field_reason('field {}: not a number', $arrival_field, arrival_raw, ': ', $echo_values)
            WHEN arrival_at IS NULL
                THEN field_reason('field {}: not ISO-8601', $arrival_field, arrival_raw, ': ', $echo_values)
            WHEN prompt_raw IS NULL THEN format('field {}: missing', $prompt_field)
            WHEN prompt_number IS NULL OR prompt_number < 1 OR prompt_number <> floor(prompt_number)
                THEN field_reason('field {}: must be an integer ≥ 1', $prompt_field, prompt_raw, ', got ', $echo_values)
            WHEN output_raw IS NULL THEN format('field {}: missing', $output_field)
            WHEN output_number IS NULL OR output_number < 1 OR output_number <> floor(output_number)
                THEN field_reason('field {}: must be an integer ≥ 1', $output_field, output_raw, ', got ', $echo_values)
            WHEN latency_raw IS NOT NULL AND (latency_number IS NULL OR latency_number < 0)
                THEN field_reason('field {}: must be a number ≥ 0', $latency_field, latency_raw, ', got ', $echo_values)
            WHEN completed_raw IS NOT NULL AND completed_at IS NULL
                THEN field_reason('field {}: not a time', $completed_field, completed_raw, ': ', $echo_values)
            WHEN completed_at < arrival_at
                THEN format('field {}: before {}', $completed_field, $arrival_field)
            WHEN first_token_raw IS NOT NULL AND first_token_at IS NULL
                THEN field_reason('field {}: not a time', $first_token_field, first_token_raw, ': ', $echo_values)
            WHEN first_token_at < arrival_at
                THEN format('field {}: before {}', $first_token_field, $arrival_field)
        END AS field_problem
    FROM spans
),
reasons AS (
    SELECT
        *,
        CASE WHEN field_problem IS NOT NULL THEN concat(record || ': ', field_problem) END AS reject_reason
    FROM judged
)
SELECT
    request_id,
    arrival_at,
    messages_json,
    CAST(prompt_number AS BIGINT) AS prompt_tokens,
    CAST(output_number AS BIGINT) AS output_tokens,
    tenant,
    route,
    logged_latency_ms,
    logged_ttft_ms,
    coalesce(structured_output, structured_request(request_fields)) AS structured_output,
    request_fields,
    prefix_hashes,
    session_id,
    file_id,
    CAST(source_line AS BIGINT) AS source_line,
    reject_reason,
    CASE WHEN reject_reason IS NOT NULL THEN left(raw, 300) END AS raw
FROM reasons
