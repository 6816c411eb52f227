-- server_metrics_gpu: per candidate with a GPU exporter (DCGM: `endpoint` 'gpu'), its readings
-- over the production replay's steady window (first send + warmup_s to last end − cooldown_s, as
-- steady_requests has it): the scrapes sent inside it, each scrape's energy counter and power
-- summed over GPUs and its utilisation averaged over them; then the mean power over the window:
-- the energy counter's increase (mJ) between the first and the last of those scrapes over the
-- time between them where the exporter has the counter, else the mean of the power gauge.
-- view: server_metrics; view: raw_timings (production requests, the first run of a repeated
-- replay); params: $warmup_s, $cooldown_s
-- Float sums and means are taken over sorted lists (list_sum(list_sort(list(x)))): the same rows
-- in any order give the same bits (the same inputs, the same bytes; sql/throughput.sql says why).
WITH windows AS (
    SELECT
        run_id,
        candidate,
        min(t_sent_ns) + CAST($warmup_s * 1e9 AS BIGINT) AS window_start_ns,
        max(t_end_ns) - CAST($cooldown_s * 1e9 AS BIGINT) AS window_end_ns
    FROM raw_timings
    WHERE labelled_item_id IS NULL AND t_sent_ns IS NOT NULL
    GROUP BY run_id, candidate
),
per_scrape AS (
    SELECT
        windows.candidate,
        server_metrics.scrape,
        min(server_metrics.t_ns) AS t_ns,
        list_sum(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metrics.family = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION'
        ))) AS energy_mj,
        list_sum(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metrics.family = 'DCGM_FI_DEV_POWER_USAGE'
        ))) AS power_w,
        list_avg(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metrics.family = 'DCGM_FI_DEV_GPU_UTIL'
        ))) AS gpu_util_pct,
        count(DISTINCT json_extract_string(server_metrics.labels_json, '$.gpu')) AS gpus
    FROM server_metrics
    JOIN windows
        ON server_metrics.run_id = windows.run_id
       AND server_metrics.t_ns BETWEEN windows.window_start_ns AND windows.window_end_ns
    WHERE server_metrics.endpoint = 'gpu' AND server_metrics.load_level IS NULL AND server_metrics.arm IS NULL
      AND server_metrics.sample NOT LIKE '%\_created' ESCAPE '\'
    GROUP BY windows.candidate, server_metrics.scrape
),
spans AS (
    SELECT
        candidate,
        count(*) AS scrapes,
        max(gpus) AS gpus,
        (max(t_ns) - min(t_ns)) / 1e9 AS seconds,
        arg_max(energy_mj, t_ns) - arg_min(energy_mj, t_ns) AS energy_mj,
        list_avg(list_sort(list(power_w))) AS power_w_mean,
        list_avg(list_sort(list(gpu_util_pct))) AS gpu_util_pct_mean
    FROM per_scrape
    GROUP BY candidate
)
SELECT
    candidate,
    scrapes,
    gpus,
    seconds,
    gpu_util_pct_mean,
    energy_mj / 1e3 AS energy_j,
    coalesce(energy_mj / 1e3 / nullif(seconds, 0), power_w_mean) AS mean_power_w,
    CASE
        WHEN energy_mj IS NOT NULL AND seconds > 0 THEN 'energy counter'
        WHEN power_w_mean IS NOT NULL THEN 'power gauge'
    END AS power_source
FROM spans
ORDER BY candidate
