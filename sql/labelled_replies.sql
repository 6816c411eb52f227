-- labelled_replies: the reply to every labelled item mixed into the load replay (accuracy
-- mode `mixed`), one row per candidate and item, in the shape of the separate accuracy replay's
-- records; pipeline.accuracy.score_replies scores them. A request that failed (or was never
-- sent) keeps its error type and is scored wrong; its latency is its E2E.
-- view: raw_timings (labelled_item_id added as NULL when missing)
SELECT
    candidate,
    labelled_item_id AS item_id,
    reply_text AS reply,
    status,
    error_type,
    http_status,
    e2e_ms AS latency_ms,
    prompt_tokens,
    output_tokens,
    sent_at,
    scheduled_offset_s,
    t_sent_ns
FROM raw_timings
WHERE labelled_item_id IS NOT NULL
ORDER BY candidate, scheduled_offset_s NULLS LAST, t_sent_ns NULLS LAST, item_id
