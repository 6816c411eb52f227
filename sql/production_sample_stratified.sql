-- production_sample_stratified: a seeded, reproducible stratified sample for content coverage.
-- Strata: prompt/output length bins ($length_bins edges) and tenant/route, each used when its
-- $by_* flag is true. Each stratum gets its proportional share of $max_requests (largest
-- remainder), at least $min_per_stratum, at most its size; inside a stratum the requests with
-- the smallest md5(seed, file, line) are drawn. The arrival process is not kept: window_offset_s
-- is the time after the sample's first request, for ordering only.
-- view: production_logs; params: $length_bins, $by_prompt_length, $by_output_length, $by_tenant,
--       $by_route, $max_requests, $min_per_stratum, $seed, $first_us
WITH binned AS (
    SELECT
        *,
        len(list_filter($length_bins, lambda edge: edge <= prompt_tokens)) AS prompt_bin,
        len(list_filter($length_bins, lambda edge: edge <= output_tokens)) AS output_bin
    FROM production_logs
),
keyed AS (
    SELECT
        *,
        concat_ws(' | ',
            CASE WHEN $by_prompt_length THEN 'prompt bin ' || prompt_bin END,
            CASE WHEN $by_output_length THEN 'output bin ' || output_bin END,
            CASE WHEN $by_tenant THEN 'tenant ' || coalesce(tenant, '(none)') END,
            CASE WHEN $by_route THEN 'route ' || coalesce(route, '(none)') END
        ) AS stratum,
        md5_number(concat_ws(':', $seed, source_file, source_line)) AS draw
    FROM binned
),
sizes AS (
    SELECT stratum, count(*) AS stratum_rows
    FROM keyed
    GROUP BY stratum
),
shares AS (
    SELECT
        *,
        $max_requests * stratum_rows / sum(stratum_rows) OVER () AS exact_share,
        floor($max_requests * stratum_rows / sum(stratum_rows) OVER ()) AS floor_share
    FROM sizes
),
quotas AS (
    SELECT
        stratum,
        stratum_rows,
        least(stratum_rows, greatest($min_per_stratum,
            floor_share + CASE WHEN row_number() OVER (ORDER BY exact_share - floor_share DESC, stratum)
                              <= $max_requests - sum(floor_share) OVER () THEN 1 ELSE 0 END
        )) AS quota
    FROM shares
),
drawn AS (
    SELECT
        keyed.*,
        row_number() OVER (
            PARTITION BY keyed.stratum ORDER BY keyed.draw, keyed.source_file, keyed.source_line
        ) AS draw_rank
    FROM keyed
),
chosen AS (
    SELECT drawn.* EXCLUDE (draw, draw_rank, prompt_bin, output_bin)
    FROM drawn
    JOIN quotas USING (stratum)
    WHERE drawn.draw_rank <= quotas.quota
)
SELECT
    *,
    (epoch_us(arrival_at) - $first_us) / 1e6 AS log_offset_s,
    (epoch_us(arrival_at) - min(epoch_us(arrival_at)) OVER ()) / 1e6 AS window_offset_s
FROM chosen
ORDER BY window_offset_s, source_file, source_line
