-- reply_mix: what the successful replies of the steady window held, per candidate — reasoning
-- tokens per request and the reasoning share of the output tokens (each a ratio over the
-- send-time batches: the ratio estimator's standard error, Student's t on $t_batches, as SLA
-- attainment's), and how many tool-call replies and structured answers were valid (counts and
-- shares; Wilson intervals are added in pipeline/analysis/tabulate/tables.py). A reply's reasoning
-- tokens are NULL in packs written before they were recorded: counted as 0.
-- staged: steady_requests
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

WITH ok AS (
    SELECT
        candidate,
        batch,
        coalesce(reasoning_tokens, 0) AS reasoning,
        coalesce(output_tokens_any, 0) AS output,
        tool_call_valid,
        structured_output_valid
    FROM steady_requests
    WHERE in_steady_window AND status = 'ok'
),
totals AS (
    SELECT
        candidate,
        count(*) AS replies,
        count(*) FILTER (WHERE reasoning > 0) AS replies_reasoning,
        sum(reasoning) AS reasoning_tokens,
        sum(output) AS reply_output_tokens,
        count(tool_call_valid) AS tool_call_replies,
        count(*) FILTER (WHERE tool_call_valid) AS tool_call_replies_valid,
        count(structured_output_valid) AS structured_replies,
        count(*) FILTER (WHERE structured_output_valid) AS structured_replies_valid
    FROM ok
    GROUP BY candidate
),
batch_sums AS (
    SELECT candidate, batch, count(*) AS replies, sum(reasoning) AS reasoning, sum(output) AS output
    FROM ok
    GROUP BY candidate, batch
),
spread AS (
    -- sqrt(B/(B − 1) · Σ (y_b − r · x_b)²) / Σ x_b, over the batches that hold a reply
    SELECT
        batch_sums.candidate,
        ratio_standard_error(
            batch_sums.reasoning, batch_sums.replies, totals.reasoning_tokens / totals.replies, totals.replies
        ) AS per_request_se,
        ratio_standard_error(
            batch_sums.reasoning,
            batch_sums.output,
            totals.reasoning_tokens / nullif(totals.reply_output_tokens, 0),
            totals.reply_output_tokens
        ) AS share_se
    FROM batch_sums
    INNER JOIN totals ON batch_sums.candidate = totals.candidate
    GROUP BY batch_sums.candidate, totals.replies, totals.reasoning_tokens, totals.reply_output_tokens
),
figures AS (
    SELECT
        totals.*,
        totals.reasoning_tokens / totals.replies AS reasoning_tokens_per_request,
        totals.reasoning_tokens / nullif(totals.reply_output_tokens, 0) AS reasoning_share,
        CAST($t_batches AS DOUBLE) * spread.per_request_se AS per_request_half_width,
        CAST($t_batches AS DOUBLE) * spread.share_se AS share_half_width
    FROM totals
    LEFT JOIN spread ON totals.candidate = spread.candidate
)
SELECT
    candidate,
    replies,
    replies_reasoning,
    CAST(reasoning_tokens AS BIGINT) AS reasoning_tokens,
    CAST(reply_output_tokens AS BIGINT) AS reply_output_tokens,
    reasoning_tokens_per_request,
    CASE
        WHEN reasoning_tokens_per_request - per_request_half_width < 0 THEN 0.0
        ELSE reasoning_tokens_per_request - per_request_half_width
    END AS reasoning_tokens_per_request_ci_low,
    reasoning_tokens_per_request + per_request_half_width AS reasoning_tokens_per_request_ci_high,
    reasoning_share,
    CASE WHEN reasoning_share - share_half_width < 0 THEN 0.0 ELSE reasoning_share - share_half_width END
        AS reasoning_share_ci_low,
    CASE WHEN reasoning_share + share_half_width > 1 THEN 1.0 ELSE reasoning_share + share_half_width END
        AS reasoning_share_ci_high,
    tool_call_replies,
    tool_call_replies_valid,
    tool_call_replies_valid / nullif(tool_call_replies, 0) AS tool_call_schema_accuracy,
    structured_replies,
    structured_replies_valid,
    structured_replies_valid / nullif(structured_replies, 0) AS structured_output_valid_rate
FROM figures
ORDER BY candidate
