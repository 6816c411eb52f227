-- ingest_accepted: the canonical request log, with file names and default request ids
-- (<file name>:<line>) filled in. Rows are in reading order, not sorted (sorting ten million
-- rows costs more than the rest of ingest); every query orders by arrival, file and line.
-- tables: canonical (ingest_canonical, materialised), log_files(file_id, source_file); params: $run_id
WITH accepted AS (
    SELECT canonical.*, log_files.source_file
    FROM canonical
    JOIN log_files USING (file_id)
    WHERE canonical.reject_reason IS NULL
)
SELECT
    coalesce(request_id, parse_filename(source_file) || ':' || source_line) AS request_id,
    arrival_at,
    messages_json,
    prompt_tokens,
    output_tokens,
    tenant,
    route,
    logged_latency_ms,
    logged_ttft_ms,
    structured_output,
    prefix_hashes,
    session_id,
    source_file,
    source_line,
    $run_id AS run_id
FROM accepted
