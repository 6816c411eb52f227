"""The request fields a log may carry that change what the server does, under OpenAI
chat-completions names, in the order sql/ingest_macros.sql `request_fields_from` reads them
(tests/unit/test_request_fields.py holds the two lists together). The canonical log keeps them as
one JSON object (`request_fields`); the plan keeps them as they will be sent, after the spec's
`workload.replay.request`; pipeline/replay/reading/reply_reading.chat_body sends them.
"""

from __future__ import annotations

REQUEST_FIELDS = (
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "functions",
    "function_call",
    "response_format",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "n",
    "presence_penalty",
    "frequency_penalty",
    "logprobs",
    "top_logprobs",
    "max_tokens",
    "max_completion_tokens",
    "reasoning_effort",
    "chat_template_kwargs",
    "thinking",
)
# the log's caps on the reply: kept in the canonical log, never sent (the replay's max_tokens is the
# planned output length, and vLLM would take max_completion_tokens over it)
LOGGED_CAPS = ("max_tokens", "max_completion_tokens")
