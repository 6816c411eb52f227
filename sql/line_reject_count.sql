-- line_reject_count: how many lines the reader itself rejected in the first pass.
-- table: line_rejects
WITH rejected AS (
    SELECT count(*) AS lines FROM line_rejects
)
SELECT lines FROM rejected
