-- concurrency_events: send and end times of every sent request per candidate; the peak in
-- flight is swept from them by pipeline.stats.peak_concurrency (two sorts, no 20 M-row window).
-- staged: steady_requests
SELECT candidate, t_sent_ns, t_end_ns
FROM steady_requests
WHERE t_sent_ns IS NOT NULL AND t_end_ns IS NOT NULL
