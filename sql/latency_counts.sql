-- latency_counts: n per candidate, metric and scope (the sample sizes the ranks depend on).
-- staged: latency_histogram
SELECT
    candidate,
    metric,
    scope,
    any_value(scope_order) AS scope_order,
    CAST(sum(values_in_bin) AS BIGINT) AS n
FROM latency_histogram
GROUP BY candidate, metric, scope
ORDER BY candidate, metric, scope_order
