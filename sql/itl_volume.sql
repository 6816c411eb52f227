-- itl_volume: how many inter-chunk gaps the steady-state window holds (content chunks − 1 per
-- successful request), read from a scalar column so the gap lists need not be opened.
-- staged: steady_requests
SELECT CAST(coalesce(sum(greatest(coalesce(content_chunks, 0) - 1, 0)), 0) AS BIGINT) AS gaps
FROM steady_requests
WHERE in_steady_window AND status = 'ok'
