-- bill_check: billed vs counted tokens, per candidate — the server's `usage` counts (billed)
-- against the client's own count of what was sent and received (counted: the plan's tokenizer, the
-- chat template's overhead measured once, plus the offered tools' definitions), over the
-- successful steady-window requests that reported usage. Each figure is a ratio of sums (billed /
-- counted) with the ratio estimator's batch-means standard error over the send-time batches,
-- Student's t on $t_batches (as reply_mix's). The cost ratio prices both sides at the candidate's
-- token prices (NULL when it is priced by the hour: its bill does not count tokens). The verdict
-- flags a difference beyond $bill_tolerance only when the counter is the candidate's own tokenizer
-- (bill_basis.counter_exact).
-- staged: steady_requests
-- view: bill_basis (candidate, counter, counter_exact, usd_per_million_input_tokens, usd_per_million_output_tokens)
-- ratio_standard_error(batch_value, batch_base, ratio_estimate, base_total): the ratio estimator's
-- batch-means standard error, sqrt(B/(B − 1) · Σ (y_b − r · x_b)²) / Σ x, an aggregate over the
-- batches (a macro parameter replaces every identifier of its name in the body). noqa CP05: the
-- linter parses a macro's untyped parameter names as data types.
-- Floating-point sums are taken over sorted lists (list_sum(list_sort(list(x)))): DuckDB's
-- multithreaded sum adds in whatever order its threads meet the rows, so the last bits of a
-- plain sum(DOUBLE) could differ between two runs on the same rows (the same inputs, the same bytes).
CREATE OR REPLACE TEMP MACRO ratio_standard_error(batch_value, batch_base, ratio_estimate, base_total) AS  -- noqa: CP05
sqrt(count(*) / nullif(count(*) - 1, 0) * list_sum(list_sort(list((batch_value - ratio_estimate * batch_base) ^ 2))))
/ nullif(base_total, 0);

WITH compared AS (
    SELECT
        steady_requests.candidate,
        steady_requests.batch,
        CAST(steady_requests.prompt_tokens_billed AS DOUBLE) AS prompt_billed,
        CAST(steady_requests.prompt_tokens_counted AS DOUBLE) AS prompt_counted,
        CAST(steady_requests.output_tokens_billed AS DOUBLE) AS output_billed,
        CAST(steady_requests.output_tokens_client AS DOUBLE) AS output_counted,
        bill_basis.usd_per_million_input_tokens AS input_price,
        bill_basis.usd_per_million_output_tokens AS output_price
    FROM steady_requests
    LEFT JOIN bill_basis ON steady_requests.candidate = bill_basis.candidate
    WHERE
        steady_requests.in_steady_window
        AND steady_requests.status = 'ok'
        AND steady_requests.prompt_tokens_billed IS NOT NULL
        AND steady_requests.output_tokens_billed IS NOT NULL
        AND steady_requests.prompt_tokens_counted IS NOT NULL
        AND steady_requests.output_tokens_client IS NOT NULL
),
priced AS (
    SELECT
        *,
        (input_price * prompt_billed + output_price * output_billed) / 1e6 AS cost_billed,
        (input_price * prompt_counted + output_price * output_counted) / 1e6 AS cost_counted
    FROM compared
),
batch_sums AS (
    SELECT
        candidate,
        batch,
        count(*) AS batch_requests,
        list_sum(list_sort(list(COLUMNS('^(prompt|output|cost)_(billed|counted)$'))))
    FROM priced
    GROUP BY candidate, batch
),
totals AS (
    SELECT
        candidate,
        CAST(sum(batch_requests) AS BIGINT) AS bill_requests,
        list_sum(list_sort(list(COLUMNS('^(prompt|output|cost)_(billed|counted)$'))))
    FROM batch_sums
    GROUP BY candidate
),
parts AS (
    -- each batch's billed and counted sums, one row per part compared: prompt tokens, output
    -- tokens, cost (none when the candidate is priced by the hour: its cost ratio is NULL)
    UNPIVOT batch_sums
    ON (prompt_billed, prompt_counted) AS prompt,
       (output_billed, output_counted) AS output,
       (cost_billed, cost_counted) AS cost
    INTO NAME part VALUE billed, counted
),
part_ratios AS (
    SELECT
        candidate,
        part,
        list_sum(list_sort(list(counted))) AS counted,
        list_sum(list_sort(list(billed))) / nullif(list_sum(list_sort(list(counted))), 0) AS ratio
    FROM parts
    GROUP BY candidate, part
),
part_intervals AS (
    -- the ratio's half-width: Student's t × the ratio estimator's batch-means standard error,
    -- sqrt(B/(B − 1) · Σ (y_b − r · x_b)²) / Σ x, over the batches that hold a compared request
    SELECT
        parts.candidate,
        parts.part,
        part_ratios.ratio,
        CAST($t_batches AS DOUBLE)
        * ratio_standard_error(parts.billed, parts.counted, part_ratios.ratio, part_ratios.counted) AS half_width
    FROM parts
    INNER JOIN part_ratios ON parts.candidate = part_ratios.candidate AND parts.part = part_ratios.part
    GROUP BY parts.candidate, parts.part, part_ratios.ratio, part_ratios.counted
),
part_columns AS (
    -- each part's ratio and interval as columns: prompt_ratio, prompt_low, prompt_high, output_…, cost_…
    -- (a ratio is never below 0)
    PIVOT (
        SELECT
            candidate,
            part,
            ratio,
            CASE WHEN ratio - half_width < 0 THEN 0.0 ELSE ratio - half_width END AS low,
            ratio + half_width AS high
        FROM part_intervals
    )
    ON part IN ('prompt', 'output', 'cost')
    USING any_value(ratio) AS ratio, any_value(low) AS low, any_value(high) AS high
    GROUP BY candidate
),
intervals AS (
    SELECT
        totals.*,
        part_columns.* EXCLUDE (candidate)
    FROM totals
    LEFT JOIN part_columns ON totals.candidate = part_columns.candidate
),
judged AS (
    -- over-billed: an interval wholly above 1 + tolerance; under-billed: wholly below 1 − tolerance;
    -- within: both token intervals inside [1 − tolerance, 1 + tolerance]; else inconclusive
    SELECT
        intervals.*,
        bill_basis.counter,
        coalesce(bill_basis.counter_exact, FALSE) AS counter_exact,
        CASE
            WHEN NOT coalesce(bill_basis.counter_exact, FALSE) THEN 'not a bill verdict (approximate counter)'
            WHEN intervals.prompt_low > 1 + $bill_tolerance OR intervals.output_low > 1 + $bill_tolerance
                THEN 'over-billed'
            WHEN intervals.prompt_high < 1 - $bill_tolerance OR intervals.output_high < 1 - $bill_tolerance
                THEN 'under-billed'
            WHEN
                intervals.prompt_low >= 1 - $bill_tolerance AND intervals.prompt_high <= 1 + $bill_tolerance
                AND intervals.output_low >= 1 - $bill_tolerance AND intervals.output_high <= 1 + $bill_tolerance
                THEN 'within tolerance'
            ELSE 'inconclusive'
        END AS bill_verdict
    FROM intervals
    LEFT JOIN bill_basis ON intervals.candidate = bill_basis.candidate
)
SELECT
    candidate,
    bill_requests,
    counter AS bill_counter,
    counter_exact AS bill_counter_exact,
    CAST(prompt_billed AS BIGINT) AS prompt_tokens_billed,
    CAST(prompt_counted AS BIGINT) AS prompt_tokens_counted,
    CAST(output_billed AS BIGINT) AS output_tokens_billed,
    CAST(output_counted AS BIGINT) AS output_tokens_counted,
    cost_billed AS bill_cost_billed_usd,
    cost_counted AS bill_cost_counted_usd,
    prompt_ratio AS billed_to_counted_prompt_tokens,
    prompt_low AS billed_to_counted_prompt_tokens_ci_low,
    prompt_high AS billed_to_counted_prompt_tokens_ci_high,
    output_ratio AS billed_to_counted_output_tokens,
    output_low AS billed_to_counted_output_tokens_ci_low,
    output_high AS billed_to_counted_output_tokens_ci_high,
    cost_ratio AS billed_to_counted_cost,
    cost_low AS billed_to_counted_cost_ci_low,
    cost_high AS billed_to_counted_cost_ci_high,
    CAST($bill_tolerance AS DOUBLE) AS bill_tolerance,
    bill_verdict
FROM judged
ORDER BY candidate
