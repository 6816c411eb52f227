-- accuracy_summary: accuracy on the buyer's labelled slice per candidate, correct / scored
-- items (a failed request is scored as wrong: the buyer got no decision), and the delta to the
-- published accuracy ($claimed_accuracy, NULL when the claim has none). The Wilson interval is
-- appended by pipeline.analysis.with_wilson.
-- view: accuracy_results
WITH per_candidate AS (
    SELECT
        candidate,
        count(*) AS scored,
        count(*) FILTER (WHERE correct) AS correct,
        count(*) FILTER (WHERE status <> 'ok') AS errors,
        count(DISTINCT label) AS labels,
        quantile_disc(latency_ms, 0.5) FILTER (WHERE status = 'ok') AS latency_ms_p50
    FROM accuracy_results
    GROUP BY candidate
)
SELECT
    candidate,
    scored,
    correct,
    errors,
    labels,
    correct / nullif(scored, 0) AS accuracy,
    CAST($claimed_accuracy AS DOUBLE) AS claimed_accuracy,
    correct / nullif(scored, 0) - CAST($claimed_accuracy AS DOUBLE) AS accuracy_delta,
    latency_ms_p50
FROM per_candidate
ORDER BY candidate
