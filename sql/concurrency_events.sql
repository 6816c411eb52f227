-- concurrency_events: send and end times of every sent request of one candidate ($candidate);
-- the peak in flight is swept from them by pipeline.stats.peak_concurrency (two sorts, no 20 M-row
-- window). One candidate at a time: the arrays go to numpy as they are, no filtering in Python.
-- staged: steady_requests
SELECT t_sent_ns, t_end_ns
FROM steady_requests
WHERE candidate = $candidate AND t_sent_ns IS NOT NULL AND t_end_ns IS NOT NULL
