"""What each column of a pack table means, in a few words: the descriptions the Dagster UI shows
beside a materialisation's column schema (`assets/support/metadata.py`), declared beside the files
they describe. ARCHITECTURE.md ("Data contracts") says the same at length; a column not listed here
has no description (its name says it, or the table's `about` does)."""

from __future__ import annotations

from collections.abc import Mapping

# columns that mean the same in every table that has them
EVERY_TABLE: Mapping[str, str] = {
    "run_id": "the Dagster run that wrote the row",
    "candidate": "the candidate endpoint (spec `candidates[].name`)",
    "load_level": "load level: × logged traffic (trace), requests/s (rate) or requests in flight (concurrency)",
    "load_level_label": "the load level as the pack names it, e.g. 1×, 2×",
    "request_id": "the request's id: the log's, else <file name>:<line>",
    "n": "how many values the figure was read from",
    "ci_low": "lower end of the confidence interval (NULL: open, the run is too short to bound it)",
    "ci_high": "upper end of the confidence interval (NULL: open, the run is too short to bound it)",
    "interval_method": "the method that set the interval: order statistic, Wilson, batch means (B batches, t)",
    "design_effect": "batch-means variance over the independent one (dependence between the run's values)",
}

_RAW_TIMINGS: Mapping[str, str] = {
    "scheduled_offset_s": "planned send time, s after the replay's start (NULL in the closed loop)",
    "sent_at": "wall-clock send time (UTC)",
    "schedule_lag_ms": "actual − planned send time, ms",
    "ttft_ms": "time to first token: first content chunk − send, ms; NULL when the request failed",
    "e2e_ms": "end to end: last byte − send, ms; NULL when the request failed",
    "tpot_ms": "time per output token after the first: (last − first token) / (output tokens − 1), ms",
    "itl_ms": "every gap between consecutive token chunks, ms",
    "prompt_tokens": "prompt tokens, server-reported (usage)",
    "output_tokens": "output tokens: the server's usage, else the client's count (output_tokens_source)",
    "prompt_tokens_client": "prompt tokens as the client counted them (the plan's tokenizer)",
    "tool_definition_tokens": (
        "tokens the offered tool definitions add to the prompt, their JSON text counted by the client (the bill "
        "check's counted side); NULL with no tools"
    ),
    "output_tokens_client": "output tokens as the client counted them",
    "max_tokens": "the output cap sent",
    "status": "ok or error",
    "error_type": (
        "which error: http_5xx, http_429, connection_reset, total_timeout, stream_cut, not_sent, cancelled (in "
        "flight when the run was interrupted), …"
    ),
    "error_message": "the error's message (server text withheld unless kept)",
    "http_status": "the HTTP status of the response",
    "retry_count": "attempts − 1",
    "content_chunks": "token chunks received, of every kind (answer, reasoning, tool call)",
    "usage_reported": "the server reported usage",
    "usage_issue": "usage_missing or usage_mismatch (the request still counts as ok)",
    "finish_reason": "as the server gave it",
    "retry_after_s": "a 429's (or 503's) Retry-After, when given",
    "t_scheduled_ns": "planned send, monotonic ns (perf_counter_ns)",
    "t_sent_ns": "the write that put the request on the socket, monotonic ns",
    "t_first_byte_ns": "first response byte, monotonic ns",
    "t_first_token_ns": "first token chunk, monotonic ns",
    "t_last_token_ns": "last token chunk, monotonic ns",
    "t_end_ns": "response complete, monotonic ns",
    "chunk_offsets_ns": "each token chunk's arrival, ns after send",
    "attempts_json": "every attempt when there were retries: error type, status, offset, duration",
    "session_id": "the logged session; NULL without one",
    "session_turn": "the turn's number in its session",
    "follows_request_id": "sent after this request's end + think_time_s",
    "think_time_s": "the wait after the previous reply, s",
    "session_history_turns": "earlier exchanges carried in the messages sent",
    "labelled_item_id": "mixed accuracy: the labelled item this request carried; NULL for production requests",
    "reply_text": "the reply, kept for labelled requests only (NULL unless privacy.text: keep)",
    "ttft_from_schedule_ms": "TTFT from the planned send (no coordinated omission), ms",
    "e2e_from_schedule_ms": "E2E from the planned send, ms",
    "t_send_call_ns": "when the send was called, before any pool wait or connection set-up, monotonic ns",
    "connect_ms": "set-up of a connection opened for this request (kept out of its latency); NULL: reused",
    "cached_tokens": "prompt tokens the server's prefix cache held; NULL where not reported",
    "output_tokens_source": "how output_tokens was counted: usage, tokenizer:<name> or chunks",
    "reasoning_chunks": "chunks carrying reasoning text",
    "tool_call_chunks": "chunks carrying tool-call pieces",
    "tool_calls": "tool calls the reply made",
    "t_first_output_ns": "first answer-text or tool-call chunk after any reasoning, monotonic ns",
    "ttfo_ms": "time to first output (after reasoning), ms",
    "reasoning_tokens": "reasoning tokens (part of output_tokens)",
    "reasoning_tokens_source": "how reasoning_tokens was counted",
    "tool_call_valid": "the reply's tool calls pass the schema rule; NULL unless it finished in tool_calls",
    "structured_output_valid": "the reply's JSON meets the requested schema; NULL unless one was asked",
    "server_prompt_n": "prompt tokens the server prefilled (its own per-request timings)",
    "server_cache_n": "prompt tokens the server read from its cache",
    "server_prompt_ms": "the server's prefill time, ms",
    "server_predicted_n": "tokens the server decoded",
    "server_predicted_ms": "the server's decode time, ms",
    "shard": "the replay shard (worker process) that sent it",
    "worker": "the Dask worker that sent it",
    "clock_offset_ns": "added to that worker's clock to put it on the scheduler's timeline",
    "repeat": "which run of the production replay sent it, 0…N−1",
    "arm": "the arm that sent it: the vendor's conditions or a step of the attribution ladder",
    "arm_loop_lag_p99_ms": "the client's loop receipt lag p99 (ms) while its arm ran: the arm's instrument error",
}

_CANONICAL_LOG: Mapping[str, str] = {
    "arrival_at": "arrival time, UTC",
    "messages_json": "chat messages as JSON (their structure only unless privacy.text: keep)",
    "prompt_tokens": "logged prompt tokens",
    "output_tokens": "logged output tokens",
    "tenant": "tenant (or the trace's log type)",
    "route": "route (or the trace's model)",
    "logged_latency_ms": "latency the log recorded",
    "logged_ttft_ms": "time to first token the log recorded",
    "structured_output": "JSON mode or tools requested; NULL when the log cannot tell",
    "request_fields": "the logged request fields that change what the server does (JSON)",
    "prefix_hashes": "one hash per prefix block; NULL when unknown",
    "session_id": "session or conversation id; NULL without one",
    "source_file": "the log file the request came from (lineage)",
    "source_line": "the 1-based line (or Parquet row) it came from (lineage)",
    "log_offset_s": "s after the log's first arrival",
    "window_offset_s": "s after the sampled window's start",
    "session_turn": "the turn's number in its session; NULL outside sessions",
    "think_time_s": "the user's think time after the previous reply; NULL outside sessions",
}

_FIGURES: Mapping[str, str] = {
    "metric": "the figure, as the metric catalogue names it (pipeline/analysis/declare/catalogue.py)",
    "basis": "where it was measured: production_load, capacity_at_sla or vendor_conditions",
    "arm": "the arm a vendor-conditions figure was measured in",
    "load_level": "the level a capacity figure was read at",
    "repeat": "NULL on the figure; a repeated replay's run on the rows of each run",
    "unit": "the figure's unit",
    "claimed": "the vendor's published value; NULL when not claimed",
    "measured": "the value measured",
    "verdict": "holds, holds within tolerance, not reproduced or inconclusive; NULL when not claimed",
    "tolerance": "the fraction of the claim the verdict allowed (claim.tolerance); NULL without a verdict",
    "tolerance_source": "the tolerance's setting and why it is its value (set in the spec, or the default's source)",
    "setting_to_judge": "for a claim no run of the spec judged: the setting that would judge it",
    "requests_to_resolve": "for an inconclusive claimed figure: the more requests that would resolve it at its "
    "measured design effect and distance to the claim (pipeline/analysis/judge/decisive.py)",
    "minutes_to_resolve": "those requests in minutes at the load that measured the figure (none without a rate)",
    "to_resolve": "for an inconclusive claimed figure: what would resolve it in words, or why length alone cannot",
    "times_claimed": "for a judged figure: measured ÷ claimed (pipeline/analysis/judge/how_far.py); NULL for any other",
    "percent_from_claim": "for a judged figure: (measured − claimed) ÷ claimed × 100; NULL for any other",
    "early_stopping": "MLPerf LoadGen's rule: confidence, the samples needed to hold, whether the run was long enough",
    "delta": "accuracy: measured − claimed",
    "not_judged": "why a claimed figure has no verdict",
    "no_steady_window": "read over a window the steady-state tests rejected: why (a verdict on it is decisive only in "
    "the direction the transient cannot explain: `decision_rule`)",
    "decision_rule": "what decided the verdict: the interval against the claim with its tolerance, or, over a window "
    "with no steady state, the bound the transient cannot explain",
    "reason": "why the figure has no value",
    "timed_from": "latency timed from the planned send when the client lagged",
    "sampled": "a note when the table read every n-th value",
    "instrument_error_ms": "a latency figure (production load, an arm): the client's own timing error, p99 ms (TPOT "
    "exempt); "
    "above a quarter of the claim's tolerance a hold is inconclusive",
    "instrument_error_source": "what measured it: wire (a capture), loop receipt lag (the replay's probe) or send lag "
    "(the judged window's schedule lag, uncapped open loop)",
    "between_run_sd": "a repeated replay: the runs' standard deviation",
    "between_run_range": "a repeated replay: the lowest and highest run",
    "repeats_interval_method": "a repeated replay: how the runs' intervals were combined",
    "query": "the sql/ query the figure was read from (lineage)",
    "inputs": "the partition's input files as analysed (lineage)",
    "inputs_sha256": "each input file's sha256, in the order of inputs",
}

_LATENCY_PERCENTILES: Mapping[str, str] = {
    "metric": "ttft_ms, tpot_ms, itl_ms, e2e_ms, ttft_from_schedule_ms or e2e_from_schedule_ms",
    "scope": "all, or a prompt-length bucket",
    "percentile": "p50, p90, p95, p99 or p999",
    "q": "the percentile as a fraction",
    "value": "the nearest-rank percentile, ms",
    "point_rank": "the rank the point value was read at",
    "low_rank": "the rank of the interval's lower end",
    "high_rank": "the rank of the interval's upper end",
    "confidence": "the interval's confidence level",
    "sample_every": "always 1: every value counts",
}

_ERROR_BREAKDOWN: Mapping[str, str] = {
    "outcome": "ok, or an error type",
    "requests": "requests with this outcome",
    "requests_planned": "every planned request",
    "rate": "requests / requests_planned",
    "rate_ci_low": "Wilson lower bound of the rate",
    "rate_ci_high": "Wilson upper bound of the rate",
}

_THROUGHPUT: Mapping[str, str] = {
    "window_s": "the steady-state window, s",
    "buckets": "the send-time batches of the rates' intervals",
    "requests_planned": "every planned request",
    "requests_in_window": "requests sent in the steady-state window",
    "requests_ok": "of those, succeeded",
    "requests_good": "of those, succeeded and met every SLA bound",
    "output_tokens_per_s": "output tokens of successful requests sent in the window / window_s",
    "requests_per_s": "requests sent in the window / window_s",
    "goodput_requests_per_s": "requests that succeeded and met every SLA bound, per second",
    "sla_attainment": "share of window requests that succeeded and met every SLA bound",
    "error_rate": "failed / planned requests",
    "mean_concurrency": "mean requests in flight",
    "steady_window": "the steady-state tests kept a window (false: no steady window, figures over the configured one)",
    "steady_reason": "why there is no steady window, or the leading ramp trimmed",
    "steady_trimmed_bins": "leading send-time spans (of 20) dropped as a ramp",
    "steady_min_length_s": "the window's minimum length: max(5 × E2E p90, the precision bound), s",
    "steady_min_length_term": "which bound set the minimum length",
    "steady_tests": "every trend and level-shift test (JSON): statistic, p-value, relative change, decision",
    "steady_window_start_s": "the window the figures read, from the first send, s",
    "steady_window_end_s": "its end, from the first send, s",
    "configured_window_start_s": "the configured window (first send + warmup_s), from the first send, s",
    "configured_window_end_s": "the configured window's end (last end − cooldown_s), from the first send, s",
    "peak_concurrency": "most requests in flight",
}

_COST_PER_DECISION: Mapping[str, str] = {
    "pricing": "hardware ($/h × replicas) or tokens (price per million)",
    "window_hours": "the steady-state window, h",
    "useful_decisions": "requests that succeeded, met the SLA and, where scored, were correct",
    "cost_usd": "the window's cost, USD",
    "cost_per_decision_usd": "cost_usd / useful_decisions",
    "cost_per_million_output_tokens_usd": "cost per million output tokens, USD",
}

_ACCURACY: Mapping[str, str] = {
    "item_id": "the labelled item's id",
    "text": "the item's text (NULL unless privacy.text: keep)",
    "messages_json": "the rendered prompt's messages (their structure only unless privacy.text: keep)",
    "source_line": "the slice file's line the item came from (lineage)",
    "request_json": "tool_call, json_schema: the item's tools, tool choice or response format as sent",
    "expected_json": "tool_call: the expected arguments",
    "reply": "the reply (NULL unless privacy.text: keep; never for tool_call, json_schema)",
    "status": "ok or error",
    "error_type": "which error, when the request failed",
    "http_status": "the HTTP status of the response",
    "latency_ms": "the request's latency, ms",
    "prompt_tokens": "prompt tokens (usage)",
    "output_tokens": "output tokens (usage)",
    "sent_at": "wall-clock send time (UTC)",
    "label": "the expected answer",
    "predicted": "what the scorer read from the reply",
    "correct": "predicted == label",
    "scored": "items scored",
    "accuracy": "correct / scored",
    "accuracy_ci_low": "Wilson lower bound",
    "accuracy_ci_high": "Wilson upper bound",
    "claimed_accuracy": "the vendor's published accuracy",
    "accuracy_delta": "accuracy − claimed",
}

_ITL_HISTOGRAM: Mapping[str, str] = {
    "in_steady_window": "the gap's request was sent inside the steady-state window",
    "prompt_bucket_lower": "prompt-length bucket, lower edge (tokens)",
    "prompt_bucket_upper": "prompt-length bucket, upper edge (tokens)",
    "gap_us": "the gap, whole microseconds",
    "batch": "the send-time batch of the gap's request (batch-means intervals)",
    "gaps": "how many gaps",
}

BY_TABLE: Mapping[str, Mapping[str, str]] = {
    "raw_timings": _RAW_TIMINGS,
    "sweep_timings": _RAW_TIMINGS,
    "arm_timings": _RAW_TIMINGS,
    "production_logs": _CANONICAL_LOG,
    "production_sample": _CANONICAL_LOG,
    "figures": _FIGURES,
    "latency_percentiles": _LATENCY_PERCENTILES,
    "error_breakdown": _ERROR_BREAKDOWN,
    "throughput": _THROUGHPUT,
    "cost_per_decision": _COST_PER_DECISION,
    "accuracy_results": _ACCURACY,
    "accuracy_summary": _ACCURACY,
    "accuracy_by_label": _ACCURACY,
    "labelled_slice": _ACCURACY,
    "itl_histogram": _ITL_HISTOGRAM,
}


def column_description(table: str, column: str) -> str | None:
    """What `column` of the pack table `table` (its `PackFile` name) means; None when not declared."""
    return BY_TABLE.get(table, {}).get(column) or EVERY_TABLE.get(column)
