-- ingest_accepted: the canonical request log, with file names and default request ids
-- (<file name>:<line>) filled in. Rows are in reading order, not sorted (sorting ten million
-- rows costs more than the rest of ingest); every query orders by arrival, file and line.
-- The spec's privacy.text ($text_policy) decides the identifiers: keep them (keep), salted
-- hashes (hash: `t-`/`r-`/`s-` and 16 hex digits of sha256 over $salt and the value; equal values
-- stay equal, so tenant mixes and sessions still profile) or NULL (drop); prefix-block hashes
-- computed from the text are salted the same way under hash (a guessed opening message cannot be
-- confirmed by hashing it) and NULL under drop. The messages stay whole here: this is the
-- private copy (pipeline/privacy.py); sql/ingest_withheld.sql reduces it for the pack.
-- tables: canonical (ingest_canonical, materialised), log_files(file_id, source_file);
-- params: $run_id, $text_policy (keep | hash | drop), $salt
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
    CASE $text_policy
        WHEN 'keep' THEN tenant
        WHEN 'hash' THEN 't-' || left(sha256($salt || '/tenant/' || tenant), 16)
    END AS tenant,
    CASE $text_policy
        WHEN 'keep' THEN route
        WHEN 'hash' THEN 'r-' || left(sha256($salt || '/route/' || route), 16)
    END AS route,
    logged_latency_ms,
    logged_ttft_ms,
    structured_output,
    -- kept under every privacy.text: tool definitions and response schemas are the buyer's API, not a
    -- customer's words (tool-call arguments and tool results are messages: withheld with them)
    request_fields,
    CASE $text_policy
        WHEN 'keep' THEN prefix_hashes
        -- a text-free trace's own block ids (Mooncake's hash_ids) are the log's, already anonymised
        -- by whoever wrote it: kept as they are (re-hashing ten million rows' ids costs ~90 s)
        WHEN 'hash' THEN CASE WHEN messages_json IS NULL THEN prefix_hashes ELSE list_transform(
            prefix_hashes,
            lambda h: CAST('0x' || left(sha256($salt || '/block/' || CAST(h AS VARCHAR)), 16) AS UBIGINT)
        ) END
    END AS prefix_hashes,
    CASE $text_policy
        WHEN 'keep' THEN session_id
        WHEN 'hash' THEN 's-' || left(sha256($salt || '/session/' || session_id), 16)
    END AS session_id,
    source_file,
    source_line,
    $run_id AS run_id
FROM accepted
