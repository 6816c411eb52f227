-- error_breakdown: every planned request per candidate by outcome ('ok' or its error type);
-- the rate's denominator is every planned request, errors included.
-- staged: steady_requests
WITH outcomes AS (
    SELECT candidate, coalesce(error_type, CASE WHEN status = 'ok' THEN 'ok' ELSE 'unknown_error' END) AS outcome
    FROM steady_requests
),
counted AS MATERIALIZED (
    SELECT candidate, outcome, count(*) AS requests
    FROM outcomes
    GROUP BY candidate, outcome
)
SELECT
    candidate,
    outcome,
    requests,
    CAST(sum(requests) OVER (PARTITION BY candidate) AS BIGINT) AS requests_planned,
    requests / sum(requests) OVER (PARTITION BY candidate) AS rate
FROM counted
ORDER BY candidate ASC, outcome = 'ok' DESC, requests DESC, outcome ASC
