-- sample_session_turns: the sample with each session turn's number and logged think time
-- (sql/session_turns.sql); NULL for requests without a session. Keeps the sample's order.
-- tables: sample (the drawn sample), session_turns
WITH numbered AS (
    SELECT sample.*, session_turns.session_turn, session_turns.think_time_s
    FROM sample
    LEFT JOIN session_turns
        ON sample.source_file = session_turns.source_file
       AND sample.source_line = session_turns.source_line
)
SELECT *
FROM numbered
ORDER BY window_offset_s, source_file, source_line
