"""The columns the code fixes: the Arrow schemas of the files whose writers build them, and the
column groups later features add (the registry in `pipeline/contracts/__init__.py` names the
files). Fixed column names must not be renamed: packs written before must still verify.

This module imports only pyarrow: every stage imports it.
"""

from __future__ import annotations

import pyarrow as pa

# the canonical request log (sql/ingest_accepted.sql writes these, then run_id)
CANONICAL_LOG_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),  # id from the log, else <file name>:<line>
        ("arrival_at", pa.timestamp("us", tz="UTC")),
        ("messages_json", pa.string()),  # chat messages as JSON when the log has text
        ("prompt_tokens", pa.int64()),  # logged prompt tokens
        ("output_tokens", pa.int64()),  # logged output tokens
        ("tenant", pa.string()),  # tenant (or the trace's log type)
        ("route", pa.string()),  # route (or the trace's model)
        ("logged_latency_ms", pa.float64()),  # latency the log recorded, when it did
        ("logged_ttft_ms", pa.float64()),  # time to first token the log recorded, when it did
        ("structured_output", pa.bool_()),  # JSON mode or tools requested; NULL when the log cannot tell
        # the logged request fields that change what the server does (tools, tool_choice, response_format,
        # temperature, top_p, seed, stop, reasoning_effort, ...) as a JSON object under OpenAI
        # chat-completions names; NULL when the log carries none (sql/ingest_macros.sql request_fields_from)
        ("request_fields", pa.string()),
        # one hash per prefix block (hash_ids, or cumulative messages); NULL when unknown
        ("prefix_hashes", pa.list_(pa.uint64())),
        # session or conversation id when the log carries one (its turns: arrival order); else NULL
        ("session_id", pa.string()),
        ("source_file", pa.string()),  # file the line came from
        ("source_line", pa.int64()),  # 1-based line (or Parquet row) inside that file
    ]
)
# every line that did not parse (sql/ingest_quarantine.sql writes these, then run_id)
QUARANTINE_SCHEMA = pa.schema(
    [("source_file", pa.string()), ("source_line", pa.int64()), ("reason", pa.string()), ("raw", pa.string())]
)

REPLAY_PLAN_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),
        ("scheduled_offset_s", pa.float64()),
        ("messages_json", pa.string()),
        ("max_tokens", pa.int64()),
        ("min_tokens", pa.int64()),
        ("prompt_source", pa.string()),
        ("tokenizer", pa.string()),
        ("prompt_tokens_logged", pa.int64()),
        ("prompt_tokens_client", pa.int64()),
        ("prompt_tokens_error", pa.int64()),
        ("source_line", pa.int64()),
        # sessions (pipeline/plan/sessions.py): NULL for a request without one
        ("session_id", pa.string()),
        ("session_turn", pa.int64()),
        ("follows_request_id", pa.string()),  # sent after this request's reply + think_time_s
        ("think_time_s", pa.float64()),  # what the replay waits (trace: logged × time_scale)
        ("think_time_logged_s", pa.float64()),
        # mixed accuracy (pipeline/plan/accuracy.py): the labelled item sent; NULL for production requests
        ("labelled_item_id", pa.string()),
        # the request fields as they will be sent: the log's after workload.replay.request (JSON object)
        ("request_fields", pa.string()),
    ]
)

LABELLED_SLICE_SCHEMA = pa.schema(
    [
        ("item_id", pa.string()),
        ("text", pa.string()),
        ("label", pa.string()),
        ("messages_json", pa.string()),
        ("source_line", pa.int64()),
        # tool_call / json_schema scorers (pipeline/accuracy/calls.py): the item's request fields as
        # sent (`tools`, `tool_choice` or `response_format`, a JSON object) and its expected arguments
        ("request_json", pa.string()),
        ("expected_json", pa.string()),
    ]
)

ACCURACY_RESULTS_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("item_id", pa.string()),
        ("label", pa.string()),
        ("reply", pa.string()),
        ("predicted", pa.string()),
        ("correct", pa.bool_()),
        ("status", pa.string()),
        ("error_type", pa.string()),
        ("http_status", pa.int64()),
        ("latency_ms", pa.float64()),
        ("prompt_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("sent_at", pa.timestamp("us", tz="UTC")),
    ]
)

# one record per replayed request (pipeline/replay/recording/records.py builds it; the journal holds these rows)
RAW_TIMING_RECORD_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("candidate", pa.string()),
        ("request_id", pa.string()),
        ("scheduled_offset_s", pa.float64()),
        ("sent_at", pa.timestamp("us", tz="UTC")),
        ("schedule_lag_ms", pa.float64()),
        ("ttft_ms", pa.float64()),
        ("e2e_ms", pa.float64()),
        ("tpot_ms", pa.float64()),
        ("itl_ms", pa.list_(pa.float64())),
        ("prompt_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("prompt_tokens_client", pa.int64()),
        ("output_tokens_client", pa.int64()),
        ("max_tokens", pa.int64()),
        ("status", pa.string()),
        ("error_type", pa.string()),
        ("error_message", pa.string()),
        ("http_status", pa.int64()),
        ("retry_count", pa.int64()),
        ("content_chunks", pa.int64()),
        ("usage_reported", pa.bool_()),
        # usage_missing | usage_mismatch (the request still counts as ok; see replay/transport/request.py)
        ("usage_issue", pa.string()),
        ("finish_reason", pa.string()),
        ("retry_after_s", pa.float64()),  # a 429's (or 503's) Retry-After, when given
        # lifecycle, monotonic ns (time.perf_counter_ns) on the replay's own clock
        ("t_scheduled_ns", pa.int64()),
        ("t_sent_ns", pa.int64()),
        ("t_first_byte_ns", pa.int64()),
        ("t_first_token_ns", pa.int64()),
        ("t_last_token_ns", pa.int64()),
        ("t_end_ns", pa.int64()),
        ("chunk_offsets_ns", pa.list_(pa.int64())),
        # every attempt when retries are on: [{error_type, http_status, sent_offset_ns, duration_ns}]
        ("attempts_json", pa.string()),
        # sessions (pipeline/replay/pacing/sessions.py); NULL for a request without one
        ("session_id", pa.string()),
        ("session_turn", pa.int64()),  # the turn's number in the logged session
        ("follows_request_id", pa.string()),  # sent after this request's end + think_time_s
        ("think_time_s", pa.float64()),
        ("session_history_turns", pa.int64()),  # earlier exchanges carried in the messages sent
        # accuracy mixed into the load: the labelled item a request carried, and its reply text
        # (kept for those requests only); NULL for every production request
        ("labelled_item_id", pa.string()),
        ("reply_text", pa.string()),
        # TTFT and E2E from the planned send time (t_scheduled_ns), not the actual one: a request
        # the client sent late keeps its wait (no coordinated omission); absent in older packs
        ("ttft_from_schedule_ms", pa.float64()),
        ("e2e_from_schedule_ms", pa.float64()),
        # when the send was called (before any pool wait or connection set-up; t_sent_ns is the
        # write that put the request on the socket), and the set-up of a connection opened for this
        # request (NULL when it reused one): transit kept out of the latency, recorded apart
        ("t_send_call_ns", pa.int64()),
        ("connect_ms", pa.float64()),
        # the prompt tokens the server's prefix cache held (usage.prompt_tokens_details.cached_tokens);
        # NULL where the server does not report it, and in files written before it was recorded
        ("cached_tokens", pa.int64()),
        # how output_tokens was counted (replay/recording/records.py `output_count`): usage | tokenizer:<name> | chunks
        ("output_tokens_source", pa.string()),
        # what the stream carried (replay/reading/reply_reading.py): `content_chunks` counts every token
        # chunk, these the reasoning and tool-call ones among them (the rest are answer text)
        ("reasoning_chunks", pa.int64()),
        ("tool_call_chunks", pa.int64()),
        ("tool_calls", pa.int64()),  # tool calls the reply made (distinct indices)
        # the first answer-text or tool-call chunk, after any reasoning (TTFO: from t_sent_ns)
        ("t_first_output_ns", pa.int64()),
        ("ttfo_ms", pa.float64()),
        # reasoning tokens (part of output_tokens) and how they were counted: usage (its
        # completion_tokens_details.reasoning_tokens) | tokenizer:<name> | chunks
        ("reasoning_tokens", pa.int64()),
        ("reasoning_tokens_source", pa.string()),
        # a reply's validity, never its text (pipeline/replay/reading/reply_validity.py): its tool calls
        # (NULL unless it finished in tool_calls) and its structured answer (NULL unless the
        # request asked for a JSON schema or object)
        ("tool_call_valid", pa.bool_()),
        ("structured_output_valid", pa.bool_()),
        # the server's own account of the request (llama.cpp's per-request `timings` object, on
        # the stream's last chunk): prompt tokens it prefilled and read from its cache, its prefill
        # and decode times; NULL where a server sends none
        ("server_prompt_n", pa.int64()),
        ("server_cache_n", pa.int64()),
        ("server_prompt_ms", pa.float64()),
        ("server_predicted_n", pa.int64()),
        ("server_predicted_ms", pa.float64()),
        # the offered tools' definitions (their JSON text) counted by the client: prompt tokens the
        # plan's prompt_tokens_client leaves out (the bill check's counted side); NULL without tools
        ("tool_definition_tokens", pa.int64()),
    ]
)
# read as NULL from files written before they existed
FROM_SCHEDULE_COLUMNS = ("ttft_from_schedule_ms", "e2e_from_schedule_ms")
COUNTED_BY_SERVER = ("cached_tokens", "output_tokens_source")  # token counts' provenance, recorded later
COUNTED_BY_CLIENT = ("tool_definition_tokens",)  # the bill check's counted side, recorded later
# what the stream carried besides answer text (issue 25); NULL in files written before
STREAM_KIND_COLUMNS = (
    "reasoning_chunks",
    "tool_call_chunks",
    "tool_calls",
    "t_first_output_ns",
    "ttfo_ms",
    "reasoning_tokens",
    "reasoning_tokens_source",
    "tool_call_valid",
    "structured_output_valid",
    "server_prompt_n",
    "server_cache_n",
    "server_prompt_ms",
    "server_predicted_n",
    "server_predicted_ms",
)
# the load level every replayed row carries (the production level's in raw_timings)
LOAD_LEVEL_COLUMNS = [("load_level", pa.float64()), ("load_level_label", pa.string())]
SHARD_COLUMN = ("shard", pa.int64())  # the worker process (0-based) that sent the request
# which run of the production replay (0-based; `workload.replay.repeats`) sent the request: 0 in a
# replay done once, NULL in raw timings written before repeats
REPEAT_COLUMN = ("repeat", pa.int64())
SWEEP_TIMINGS_SCHEMA = pa.schema([*RAW_TIMING_RECORD_SCHEMA, *LOAD_LEVEL_COLUMNS])
# one row per /metrics sample (pipeline/replay/endpoint/server_metrics.py): scrape sent at (perf_counter_ns),
# scrape, family, sample name, labels (sorted JSON), value; endpoint (`server`, `gpu`: its DCGM
# exporter) and scope (load_level: NULL for the production replay); both NULL in older files
SERVER_METRICS_SCHEMA = pa.schema(
    [
        ("t_ns", pa.int64()),
        ("scrape", pa.int64()),
        ("family", pa.string()),
        ("sample", pa.string()),
        ("labels_json", pa.string()),
        ("value", pa.float64()),
        ("endpoint", pa.string()),
        ("load_level", pa.float64()),
        ("arm", pa.string()),
    ]
)
# data/figures.parquet (pipeline/analysis/judge/figures_table.py): one row per figure of a partition
# (candidate × metric × basis), a repeated replay's runs as rows of their own (`repeat`), with the
# claim, the interval, the verdict, the notes that qualify it and its lineage (query, input files)
FIGURES_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("metric", pa.string()),
        ("basis", pa.string()),
        ("arm", pa.string()),
        ("load_level", pa.float64()),
        ("load_level_label", pa.string()),
        ("repeat", pa.int64()),
        ("unit", pa.string()),
        ("claimed", pa.float64()),
        ("measured", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("n", pa.int64()),
        ("verdict", pa.string()),
        ("tolerance", pa.float64()),  # the claim's tolerance the verdict used (claim.tolerance)
        ("tolerance_source", pa.string()),  # where that tolerance comes from
        ("interval_method", pa.string()),
        ("design_effect", pa.float64()),
        (
            "early_stopping",
            pa.struct(
                [
                    ("confidence", pa.float64()),
                    ("min_samples_to_hold", pa.int64()),
                    ("effective_samples", pa.float64()),  # n over the design effect (absent in older tables)
                    ("long_enough", pa.bool_()),
                ]
            ),
        ),
        ("delta", pa.float64()),
        ("not_judged", pa.string()),
        ("no_steady_window", pa.string()),  # read over a window the steady-state tests rejected: why
        # what decided the verdict (pipeline/analysis/statistics/stats.py unsteady_verdict)
        ("decision_rule", pa.string()),
        ("reason", pa.string()),
        ("setting_to_judge", pa.string()),  # a claim no run judges: the spec setting that would
        # an inconclusive claimed figure: what would resolve it (pipeline/analysis/judge/decisive.py)
        ("requests_to_resolve", pa.int64()),  # more requests at its design effect and distance to the claim
        ("minutes_to_resolve", pa.float64()),  # those requests at the load that measured it
        ("to_resolve", pa.string()),  # the two in words, or why length alone cannot resolve it
        # a judged figure: how far from its claim (pipeline/analysis/judge/how_far.py)
        ("times_claimed", pa.float64()),  # measured ÷ claimed
        ("percent_from_claim", pa.float64()),  # (measured − claimed) ÷ claimed × 100
        ("timed_from", pa.string()),
        ("sampled", pa.string()),
        # a production-load latency figure's instrument error: p99 ms and what measured it
        # (pipeline/analysis/judge/instrument_error.py); NULL on other figures
        ("instrument_error_ms", pa.float64()),
        ("instrument_error_source", pa.string()),
        ("between_run_sd", pa.float64()),
        ("between_run_range", pa.list_(pa.float64())),
        ("repeats_interval_method", pa.string()),
        ("query", pa.string()),
        ("inputs", pa.list_(pa.string())),
        ("inputs_sha256", pa.list_(pa.string())),
    ]
)
