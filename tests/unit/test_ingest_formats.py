"""The vendor log formats (otel_genai, litellm_spend_logs, langfuse, bedrock_invocations) on fixtures
in each vendor's documented shape (tests/fixtures/logs/README.md cites the schemas): rows, rejects,
line numbers and reasons, and the logged latency/TTFT that feed the production profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.spec.workload import LogSource
from pipeline.workload.logs import ingest_log
from pipeline.workload.profile import profile_requests

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def _rejects(result) -> dict[int, str]:
    return {row["source_line"]: row["reason"] for row in result.rejects.to_pylist()}


def _rows(result) -> dict[str, dict]:
    return {row["request_id"]: row for row in result.rows.to_pylist()}


def test_otel_genai_keeps_model_call_spans_and_names_the_bad_span():
    result = ingest_log(FIXTURES / "otel_genai_spans.jsonl", "otel_genai")
    rows = _rows(result)
    assert sorted(rows) == ["a1b2c3d4e5f60001", "a1b2c3d4e5f60004", "a1b2c3d4e5f60005"]  # no HTTP, no embeddings
    assert _rejects(result) == {
        1: "span 4 (spanId a1b2c3d4e5f60003): field gen_ai.usage.output_tokens: missing",
        3: "not valid JSON",
        4: "field resourceSpans: missing or not a list",
        5: "span 1 (spanId a1b2c3d4e5f60006): field startTimeUnixNano: not a number: yesterday",
    }
    # a rejected span shows the start of its line (looked up after canonical), a rejected line all of it
    lines = (FIXTURES / "otel_genai_spans.jsonl").read_text().splitlines()
    raw = {row["source_line"]: row["raw"] for row in result.rejects.to_pylist()}
    assert raw == {1: lines[0][:300], 3: lines[2], 4: lines[3], 5: lines[4][:300]}
    chat = rows["a1b2c3d4e5f60001"]
    assert chat["arrival_at"].isoformat() == "2025-11-02T14:00:00.100000+00:00"
    assert (chat["prompt_tokens"], chat["output_tokens"], chat["logged_latency_ms"]) == (12, 40, 1500.0)
    assert (chat["tenant"], chat["route"], chat["session_id"], chat["source_line"]) == (
        "support-bot",
        "gpt-4o-mini",
        "conv-7",
        1,
    )
    assert json.loads(chat["messages_json"]) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Where is my order?"},
    ]
    from_events = rows["a1b2c3d4e5f60005"]
    assert json.loads(from_events["messages_json"])[1] == {"role": "user", "content": "And the refund?"}
    assert from_events["session_id"] == "sess-3" and from_events["source_line"] == 2
    assert rows["a1b2c3d4e5f60004"]["messages_json"] is None and len(from_events["prefix_hashes"]) == 2


@pytest.mark.parametrize(
    ("name", "lines", "rejects"),
    [
        (
            "litellm_spend_logs.jsonl",
            {"chatcmpl-01": 1, "chatcmpl-02": 2, "chatcmpl-07": 7},
            {
                4: "field completion_tokens: must be an integer ≥ 1, got 0",
                5: "not valid JSON",
                6: "field endTime: before startTime",
            },
        ),
        (
            "litellm_spend_logs.csv",
            {"chatcmpl-11": 2, "chatcmpl-12": 3},
            {
                4: "field completion_tokens: must be an integer ≥ 1, got 0",
                5: "field completionStartTime: not a time: yesterday",
            },
        ),
    ],
)
def test_litellm_spend_logs_export(name: str, lines: dict[str, int], rejects: dict[int, str]):
    result = ingest_log(FIXTURES / name, "litellm_spend_logs")
    rows = _rows(result)
    assert {key: row["source_line"] for key, row in rows.items()} == lines  # the embedding row is no request
    assert _rejects(result) == rejects
    first = rows[next(iter(lines))]
    assert (first["logged_latency_ms"], first["logged_ttft_ms"]) == (1500.0, 250.0)  # endTime, completionStartTime
    assert (first["tenant"], first["route"], first["prompt_tokens"], first["output_tokens"]) == (
        "team-search",
        "chat-small",
        12,
        40,
    )
    second = rows[list(lines)[1]]
    assert second["logged_ttft_ms"] is None and second["tenant"] is None


def test_litellm_json_rows_keep_messages_and_sessions():
    rows = _rows(ingest_log(FIXTURES / "litellm_spend_logs.jsonl", "litellm_spend_logs"))
    assert rows["chatcmpl-01"]["session_id"] == rows["chatcmpl-07"]["session_id"] == "sess-1"
    assert json.loads(rows["chatcmpl-07"]["messages_json"])[-1] == {"role": "user", "content": "more"}
    assert rows["chatcmpl-02"]["messages_json"] is None  # messages {}: not stored by the proxy


def test_langfuse_generations():
    result = ingest_log(FIXTURES / "langfuse_observations.jsonl", "langfuse")
    rows = _rows(result)
    assert {key: row["source_line"] for key, row in rows.items()} == {"obs-01": 1, "obs-03": 3, "obs-07": 7}
    assert _rejects(result) == {
        4: "field completionStartTime: before startTime",
        5: "field usageDetails.input: missing",
    }
    assert (rows["obs-01"]["logged_latency_ms"], rows["obs-01"]["logged_ttft_ms"]) == (1500.0, 300.0)
    assert rows["obs-01"]["session_id"] == "sess-a" and rows["obs-03"]["session_id"] == "sess-b"
    assert json.loads(rows["obs-03"]["messages_json"])[0]["role"] == "system"
    assert (rows["obs-07"]["prompt_tokens"], rows["obs-07"]["output_tokens"]) == (8, 3)
    assert rows["obs-07"]["arrival_at"].isoformat() == "2026-11-02T14:00:05+00:00"


def test_bedrock_invocation_records():
    result = ingest_log(FIXTURES / "bedrock_invocations.jsonl", "bedrock_invocations")
    rows = _rows(result)
    assert {key: row["source_line"] for key, row in rows.items()} == {
        "915a6a04-0001": 1,
        "915a6a04-0002": 2,
        "915a6a04-0003": 3,
    }
    assert _rejects(result) == {
        4: "field input.inputTokenCount: missing",
        5: "field timestamp: missing",
        6: "not a JSON object",
        7: "field output.outputTokenCount: must be an integer ≥ 1, got 0",
    }
    converse, anthropic, titan = rows["915a6a04-0001"], rows["915a6a04-0002"], rows["915a6a04-0003"]
    assert (converse["prompt_tokens"], converse["output_tokens"], converse["logged_latency_ms"]) == (35, 446, 3640.0)
    assert converse["route"] == "anthropic.claude-3-haiku-20240307-v1:0" and converse["tenant"].startswith(
        "arn:aws:sts"
    )
    assert json.loads(anthropic["messages_json"]) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "more"},
    ]
    assert json.loads(titan["messages_json"]) == [{"role": "user", "content": "Hello"}]
    assert anthropic["logged_latency_ms"] is None


def test_logged_latency_feeds_the_production_concurrency_estimate(tmp_path: Path):
    """Latency from startTime/endTime (no latency field) counts in the logged-concurrency figures."""
    from pipeline.workload.logs.ingest import ingest

    rows, quarantine = tmp_path / "rows.parquet", tmp_path / "quarantine.parquet"
    source = LogSource(path=str(FIXTURES / "litellm_spend_logs.jsonl"), format="litellm_spend_logs")
    ingest(source, tmp_path, rows, quarantine)
    profile = profile_requests(rows)
    assert profile["requests_with_latency"] == 3
    assert profile["latency_mean_ms"] == pytest.approx((1500 + 900 + 1250) / 3)
    assert profile["concurrency_peak_logged"] == 2  # chatcmpl-01 [0.5, 2.0) overlaps chatcmpl-02 [1.0, 1.9)


def test_database_source_is_spec_checked():
    with pytest.raises(ValueError, match="exactly one of path"):
        LogSource(format="litellm_spend_logs")
    with pytest.raises(ValueError, match="dsn_env is for litellm_spend_logs"):
        LogSource(format="openai_jsonl", dsn_env="DB_URL")
    assert LogSource(format="litellm_spend_logs", dsn_env="LITELLM_DATABASE_URL").path is None


@pytest.mark.parametrize(
    ("name", "log_format", "with_latency"),
    [
        ("otel_genai_spans.jsonl", "otel_genai", 3),
        ("litellm_spend_logs.csv", "litellm_spend_logs", 2),
        ("langfuse_observations.jsonl", "langfuse", 3),
        ("bedrock_invocations.jsonl", "bedrock_invocations", 1),  # only Converse replies carry metrics.latencyMs
    ],
)
def test_every_vendor_format_profiles(tmp_path: Path, name: str, log_format: str, with_latency: int):
    from pipeline.workload.logs.ingest import ingest

    rows, quarantine = tmp_path / "rows.parquet", tmp_path / "quarantine.parquet"
    ingest(LogSource(path=str(FIXTURES / name), format=log_format), tmp_path, rows, quarantine)
    profile = profile_requests(rows)
    assert profile["requests"] >= 2 and profile["requests_with_latency"] == with_latency


def test_the_spec_names_exactly_the_registered_formats():
    """The spec's LogFormatName (pydantic needs it literal) and ingest's registry never disagree."""
    from typing import get_args

    from pipeline.spec.workload import LogFormatName
    from pipeline.workload.logs.formats import FORMATS

    assert sorted(get_args(LogFormatName)) == sorted(FORMATS)


def _request_fields(name: str, log_format: str) -> dict[str, dict | None]:
    rows = _rows(ingest_log(FIXTURES / name, log_format))
    return {key: json.loads(row["request_fields"]) if row["request_fields"] else None for key, row in rows.items()}


def test_request_fields_under_openai_names_from_every_vendor_format():
    """Each format's own names for the request's settings (tests/fixtures/logs/README.md) become
    the canonical log's request_fields under OpenAI chat-completions names."""
    otel = _request_fields("otel_genai_spans.jsonl", "otel_genai")
    assert otel["a1b2c3d4e5f60001"] == {
        "temperature": 0.2,
        "top_p": 0.9,
        "seed": 42,
        "stop": ["END"],
        "n": 1,
        "presence_penalty": 0.25,
        "frequency_penalty": 0.5,
        "max_tokens": 512,
    }
    litellm = _request_fields("litellm_spend_logs.jsonl", "litellm_spend_logs")
    assert litellm["chatcmpl-01"] == {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "order_status",
                    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
                },
            }
        ],
        "tool_choice": "auto",
        "temperature": 0.3,
        "reasoning_effort": "low",
    }
    assert litellm["chatcmpl-02"] is None  # no request body logged
    langfuse = _request_fields("langfuse_observations.jsonl", "langfuse")
    assert langfuse["obs-01"] == {"temperature": 0}
    assert langfuse["obs-03"] == {
        "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "lookup"}},
        "temperature": 0.7,
        "top_p": 0.95,
        "max_tokens": 256,
    }
    bedrock = _request_fields("bedrock_invocations.jsonl", "bedrock_invocations")
    ticket_schema = {"type": "object", "properties": {"ticket_id": {"type": "string"}}}
    assert bedrock["915a6a04-0001"] == {  # Converse: inferenceConfig, toolConfig, additionalModelRequestFields
        "tools": [
            {
                "type": "function",
                "function": {"name": "ticket_lookup", "description": "Find a ticket", "parameters": ticket_schema},
            }
        ],
        "tool_choice": "required",
        "temperature": 0.5,
        "top_p": 0.9,
        "stop": ["###"],
        "max_tokens": 512,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    weather = bedrock["915a6a04-0002"]  # InvokeModel with an Anthropic Messages body
    assert weather["tool_choice"] == {"type": "function", "function": {"name": "weather"}}
    assert weather["tools"][0]["function"]["name"] == "weather" and weather["temperature"] == 0.1


def test_structured_output_is_read_from_the_request_fields():
    rows = _rows(ingest_log(FIXTURES / "bedrock_invocations.jsonl", "bedrock_invocations"))
    assert rows["915a6a04-0001"]["structured_output"] is True  # tools offered
    assert rows["915a6a04-0003"]["structured_output"] is None  # nothing logged: the log cannot tell


def test_otel_messages_that_are_not_json_reject_their_span_not_the_ingest(tmp_path: Path):
    """gen_ai.input.messages is a JSON string inside the span: broken, it rejects its span (it used to
    stop the whole ingest with DuckDB's 'Malformed JSON')."""
    line = (FIXTURES / "otel_genai_spans.jsonl").read_text().splitlines()[0]
    broken = line.replace('[{\\"role\\": \\"system\\"', '[{\\"role\\": \\"system\\" :', 1)
    assert broken != line
    path = tmp_path / "spans.jsonl"
    path.write_text(broken + "\n")
    result = ingest_log(path, "otel_genai")
    assert sorted(row["reason"] for row in result.rejects.to_pylist()) == [
        "span 2 (spanId a1b2c3d4e5f60001): field gen_ai.input.messages: not valid JSON",
        "span 4 (spanId a1b2c3d4e5f60003): field gen_ai.usage.output_tokens: missing",  # as before
    ]
    assert "a1b2c3d4e5f60001" not in _rows(result)
