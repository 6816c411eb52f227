-- bench_synthetic_litellm_spend_logs: LiteLLM_SpendLogs rows as JSON lines (the /spend/logs export
-- shape, columns as schema.prisma names them, no stored messages) for the ingest benchmark:
-- Poisson-like arrivals at ~2,800 requests/s, log-normal lengths, latency and TTFT from the
-- lengths, one embedding row in fifty (not a request), a cut line every ~million rows.
-- macro: synthetic_requests (bench/sql/bench_synthetic_requests.sql); params: $rows, $seed (0..1)
SELECT
    CASE WHEN i % 1000003 = 17 THEN '{"request_id": "chatcmpl-' || i || '", "startTime": ' ELSE
    '{"request_id": "chatcmpl-' || i || '", "call_type": "' || CASE WHEN i % 50 = 3 THEN 'aembedding' ELSE 'acompletion' END
        || '", "api_key": "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b", "spend": 0.00012'
        || ', "total_tokens": ' || (prompt + output) || ', "prompt_tokens": ' || prompt
        || ', "completion_tokens": ' || output
        || ', "startTime": "' || strftime(started, '%Y-%m-%dT%H:%M:%S.%g')
        || '", "endTime": "' || strftime(started + to_milliseconds(CAST(300 + 0.05 * prompt + 20 * output AS BIGINT)), '%Y-%m-%dT%H:%M:%S.%g')
        || '", "completionStartTime": "' || strftime(started + to_milliseconds(CAST(150 + 0.05 * prompt AS BIGINT)), '%Y-%m-%dT%H:%M:%S.%g')
        || '", "model": "gpt-4o-mini", "model_group": "chat-small", "custom_llm_provider": "openai"'
        || ', "api_base": "https://api.openai.com/v1", "user": "", "metadata": {"user_api_key_team_alias": "search"}'
        || ', "cache_hit": "False", "cache_key": "", "request_tags": [], "team_id": "team-' || (i % 7)
        || '", "end_user": "", "messages": {}, "response": {}, "session_id": '
        || CASE WHEN i % 10 = 0 THEN '"sess-' || (i // 1000) || '"' ELSE 'null' END
        || ', "status": "success"}' END AS line
FROM synthetic_requests($rows, $seed)
ORDER BY i
