-- ingest_mooncake_jsonl_fields: Mooncake trace JSONL, one object per line:
--   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
-- timestamp: milliseconds since the trace's start; hash_ids: one id per 512-token prompt block,
-- equal ids meaning an equal prefix (the prefix-cache key).
-- view: log_lines(file_id, source_line, line); macro: json_line_problem
WITH data_lines AS (
    SELECT file_id, source_line, line
    FROM log_lines
    WHERE regexp_matches(line, '[^ \t\r]')  -- not blank (trim(line, chars) cost 3 µs a line)
),
extracted AS (
    SELECT
        *,
        json_valid(line) AS is_json,
        -- an object starts with '{' (checked without a third parse of the line)
        CASE WHEN json_valid(line) AND regexp_matches(line, '^ *\{')
            THEN json_extract(line, ['$.timestamp', '$.input_length', '$.output_length', '$.hash_ids'])
        END AS f
    FROM data_lines
),
blocks AS (
    SELECT
        *,
        CASE WHEN json_type(f[4]) = 'ARRAY' THEN try_cast(f[4] AS UBIGINT[]) END AS hash_ids
    FROM extracted
)
SELECT
    file_id,
    source_line,
    CAST(NULL AS VARCHAR) AS record,
    line AS raw,
    json_line_problem(
        is_json,
        f IS NOT NULL,
        CASE
            WHEN json_type(f[1]) IS NULL OR json_type(f[1]) NOT IN ('BIGINT', 'UBIGINT', 'DOUBLE')
                THEN 'field timestamp: missing or not a number'
            WHEN json_type(f[4]) IS NOT NULL AND (hash_ids IS NULL OR list_count(hash_ids) <> len(hash_ids))
                THEN 'field hash_ids: not a list of non-negative integers'
        END
    ) AS problem,
    CAST(NULL AS VARCHAR) AS request_id,
    f[1] ->> '$' AS arrival_raw,
    'number' AS arrival_kind,
    CASE WHEN json_type(f[2]) IN ('BIGINT', 'UBIGINT') THEN f[2] ->> '$' ELSE CAST(f[2] AS VARCHAR) END AS prompt_raw,
    CASE WHEN json_type(f[3]) IN ('BIGINT', 'UBIGINT') THEN f[3] ->> '$' ELSE CAST(f[3] AS VARCHAR) END AS output_raw,
    CAST(NULL AS VARCHAR) AS tenant,
    CAST(NULL AS VARCHAR) AS route,
    CAST(NULL AS VARCHAR) AS latency_raw,
    CAST(NULL AS VARCHAR) AS completed_raw,
    CAST(NULL AS VARCHAR) AS first_token_raw,
    CAST(NULL AS VARCHAR) AS messages_json,
    CAST(NULL AS BOOLEAN) AS structured_output,
    hash_ids AS prefix_hashes,
    CAST(NULL AS VARCHAR) AS session_id
FROM blocks
