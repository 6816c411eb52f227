-- steady_windows: the steady-state window of each candidate (and load level), numbered. Staged
-- on its own before itl_histogram: as a table of known size (a handful of rows) it is the build
-- side of the join against the gap lists, which then stream; left inside itl_histogram, the
-- planner could not tell it from 10 M rows and could hash the 10^9 gaps instead (13 GB at 10 M).
-- staged: steady_requests
SELECT
    candidate, load_level, window_start_ns, window_end_ns,
    CAST(row_number() OVER (ORDER BY candidate, load_level NULLS FIRST) AS BIGINT) AS window_id
FROM (SELECT DISTINCT candidate, load_level, window_start_ns, window_end_ns FROM steady_requests) AS windows
