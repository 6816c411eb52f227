-- ingest_withheld: the canonical request log as the pack keeps it under privacy.text hash or
-- drop: each message reduced to its role and its content's length in characters (the profile's
-- multi-turn and system-prompt shares read the roles), every other column as the private copy has
-- it (identifiers already hashed or dropped by sql/ingest_accepted.sql). A prompt that is not a
-- JSON list of messages (a CSV column of plain text) is one message without a role.
-- view: accepted_rows (sql/ingest_accepted.sql's rows)
SELECT
    * REPLACE (
        CASE
            WHEN messages_json IS NULL THEN NULL
            WHEN json_valid(messages_json) AND json_type(messages_json) = 'ARRAY'
                THEN CAST(to_json(list_transform(
                    json_extract(messages_json, '$[*]'),
                    lambda m: { 'role': m ->> '$.role', 'chars': length(coalesce(m ->> '$.content', '')) }
                )) AS VARCHAR)
            ELSE CAST(to_json([{ 'role': CAST(NULL AS VARCHAR), 'chars': length(messages_json) }]) AS VARCHAR)
        END AS messages_json
    )
FROM accepted_rows
