-- cost_per_decision: cost of the steady-state window per useful decision (succeeded and met
-- every SLA bound). Hardware pricing: $/hour × replicas × window hours. Token pricing: every
-- attempt's input and output tokens, failed ones included (client counts where the server
-- reported none).
-- staged: steady_requests; view: prices (candidate, usd_per_hour, replicas,
-- usd_per_million_input_tokens, usd_per_million_output_tokens)
WITH usage_in_window AS (
    SELECT
        candidate,
        any_value(window_start_ns) AS window_start_ns,
        any_value(window_end_ns) AS window_end_ns,
        CAST(coalesce(sum(coalesce(prompt_tokens, prompt_tokens_client)) FILTER (WHERE in_steady_window), 0) AS BIGINT) AS input_tokens_billed,
        CAST(coalesce(sum(coalesce(output_tokens, output_tokens_client, 0)) FILTER (WHERE in_steady_window), 0) AS BIGINT) AS output_tokens_billed,
        CAST(coalesce(sum(output_tokens) FILTER (WHERE in_steady_window AND status = 'ok'), 0) AS BIGINT) AS output_tokens_ok,
        count(*) FILTER (WHERE in_steady_window AND met_sla) AS useful_decisions
    FROM steady_requests
    GROUP BY candidate
),
costed AS (
    SELECT
        usage_in_window.*,
        greatest(window_end_ns - window_start_ns, 0) / 3.6e12 AS window_hours,
        CASE WHEN prices.usd_per_hour IS NOT NULL THEN 'hourly' ELSE 'tokens' END AS pricing,
        CASE
            WHEN prices.usd_per_hour IS NOT NULL
                THEN prices.usd_per_hour * prices.replicas
                     * greatest(window_end_ns - window_start_ns, 0) / 3.6e12
            ELSE input_tokens_billed * coalesce(prices.usd_per_million_input_tokens, 0) / 1e6
                 + output_tokens_billed * coalesce(prices.usd_per_million_output_tokens, 0) / 1e6
        END AS cost_usd
    FROM usage_in_window
    JOIN prices USING (candidate)
)
SELECT
    candidate,
    pricing,
    window_hours,
    input_tokens_billed,
    output_tokens_billed,
    useful_decisions,
    cost_usd,
    cost_usd / nullif(useful_decisions, 0) AS cost_per_decision_usd,
    cost_usd / nullif(output_tokens_ok, 0) * 1e6 AS cost_per_million_output_tokens_usd
FROM costed
ORDER BY candidate
