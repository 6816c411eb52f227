-- litellm_spend_logs_postgres: runs on the LiteLLM proxy's PostgreSQL database (not on DuckDB).
-- Every row of "LiteLLM_SpendLogs" (schema.prisma, model LiteLLM_SpendLogs) as one JSON text in
-- primary-key order, so that the JSON-lines export's query (ingest_litellm_spend_logs_fields)
-- reads the table too and a rejected row is named by its request_id. DateTime columns are
-- TIMESTAMP(3) without a zone: row_to_json writes them ISO-8601 without an offset (read as the
-- spec's timezone, UTC by default, which is what LiteLLM stores).
SELECT
    spend_logs.request_id,
    CAST(row_to_json(spend_logs) AS TEXT) AS line
-- (quoted: PostgreSQL folds unquoted names to lower case)
FROM "LiteLLM_SpendLogs" AS spend_logs  -- noqa: RF06
ORDER BY spend_logs.request_id
