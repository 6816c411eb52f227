-- ingest_log_fields: every format's fields in the one shape sql/ingest_canonical.sql reads. A
-- format's *_fields query (materialised as format_fields) writes only the columns its log has;
-- UNION ALL BY NAME with this typed empty shape adds the rest as NULL and gives each its type.
-- table: format_fields (a format's *_fields query)
WITH shape AS (
    SELECT
        CAST(NULL AS BIGINT) AS file_id,
        CAST(NULL AS BIGINT) AS source_line,
        CAST(NULL AS VARCHAR) AS record,  -- the request inside its line (a span, a database row)
        CAST(NULL AS VARCHAR) AS raw,
        CAST(NULL AS VARCHAR) AS problem,
        CAST(NULL AS VARCHAR) AS request_id,
        CAST(NULL AS VARCHAR) AS arrival_raw,
        CAST(NULL AS VARCHAR) AS arrival_kind,
        CAST(NULL AS VARCHAR) AS completed_raw,
        CAST(NULL AS VARCHAR) AS first_token_raw,
        CAST(NULL AS VARCHAR) AS prompt_raw,
        CAST(NULL AS VARCHAR) AS output_raw,
        CAST(NULL AS VARCHAR) AS tenant,
        CAST(NULL AS VARCHAR) AS route,
        CAST(NULL AS VARCHAR) AS latency_raw,
        CAST(NULL AS VARCHAR) AS messages_json,
        CAST(NULL AS BOOLEAN) AS structured_output,
        CAST(NULL AS VARCHAR) AS request_fields,  -- JSON object, OpenAI names (request_fields_from)
        CAST(NULL AS UBIGINT[]) AS prefix_hashes,
        CAST(NULL AS VARCHAR) AS session_id
    WHERE FALSE
)
SELECT * FROM shape
UNION ALL BY NAME
SELECT * FROM format_fields
