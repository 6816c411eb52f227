"""What the successful replies of the steady window held (sql/reply_mix.sql), appended to the
throughput table per candidate: reasoning tokens per request and their share of the output,
tool-call and structured-output validity with Wilson intervals."""

from __future__ import annotations

import pyarrow as pa

from pipeline.analysis.statistics.intervals import with_candidate_columns, with_wilson
from pipeline.duck.session import QuerySession


def with_reply_mix(session: QuerySession, table: pa.Table) -> pa.Table:
    """The throughput rows with what the replies held (sql/reply_mix.sql: reasoning per request and
    share of output, tool-call and structured-output validity with Wilson intervals), per
    candidate; NULL for a candidate without a successful reply in the window."""
    table = with_candidate_columns(table, session.run("reply_mix"), REPLY_MIX_COLUMNS)
    z = session.params["z"]
    table = with_wilson(table, "tool_call_replies_valid", "tool_call_replies", "tool_call_schema_accuracy", z)
    return with_wilson(table, "structured_replies_valid", "structured_replies", "structured_output_valid_rate", z)


# sql/reply_mix.sql's columns, appended to the throughput table (its candidate aside)
REPLY_MIX_COLUMNS = (
    "replies",
    "replies_reasoning",
    "reasoning_tokens",
    "reply_output_tokens",
    "reasoning_tokens_per_request",
    "reasoning_tokens_per_request_ci_low",
    "reasoning_tokens_per_request_ci_high",
    "reasoning_share",
    "reasoning_share_ci_low",
    "reasoning_share_ci_high",
    "tool_call_replies",
    "tool_call_replies_valid",
    "tool_call_schema_accuracy",
    "structured_replies",
    "structured_replies_valid",
    "structured_output_valid_rate",
)
