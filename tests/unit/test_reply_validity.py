"""Tool-call schema accuracy and structured-output validity, on BFCL's real travel-booking tools
(tests/fixtures/field): the reference endpoint's arguments validate against every one of its 18
schemas; a call with a missing required argument, a wrong type, an unknown tool or arguments
that are not JSON does not; replies that do not finish in `tool_calls` are not judged — as
K2-Vendor-Verifier's tool_calls_eval.py judges them."""

from __future__ import annotations

import json
import random

import pytest

from pipeline.reference.agent_replies import instance_of
from pipeline.replay.reading.reply_validity import structured_output_valid, tool_call_valid
from tests.support.field_files import bfcl_tools

TOOLS = bfcl_tools()
FIELDS = {"tools": TOOLS, "tool_choice": "auto"}


def _call(name: str, arguments) -> dict:
    return {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}


def test_the_suite_is_the_real_one():
    assert len(TOOLS) == 18
    assert {t["function"]["name"] for t in TOOLS} >= {"book_flight", "compute_exchange_rate", "get_flight_cost"}


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t["function"]["name"])
def test_the_reference_endpoints_arguments_validate_against_every_real_schema(tool):
    function = tool["function"]
    arguments = instance_of(function["parameters"], random.Random(0))
    assert set(arguments) >= set(function["parameters"].get("required", []))
    assert tool_call_valid(FIELDS, [_call(function["name"], arguments)], "tool_calls") is True


def test_invalid_calls_are_invalid():
    good = {"base_currency": "USD", "target_currency": "EUR", "value": 12.5}
    assert tool_call_valid(FIELDS, [_call("compute_exchange_rate", good)], "tool_calls") is True
    missing = {"base_currency": "USD", "value": 12.5}
    wrong_type = {**good, "value": "twelve"}
    for call in (
        _call("compute_exchange_rate", missing),
        _call("compute_exchange_rate", wrong_type),
        _call("convert_currency", good),  # not offered
        _call("compute_exchange_rate", '{"base_currency": "USD", '),  # cut JSON
    ):
        assert tool_call_valid(FIELDS, [call], "tool_calls") is False
    # one bad call among good ones spoils the reply; finishing for tool calls with none is invalid
    assert tool_call_valid(FIELDS, [_call("compute_exchange_rate", good), _call("x", {})], "tool_calls") is False
    assert tool_call_valid(FIELDS, [], "tool_calls") is False


def test_replies_that_do_not_finish_in_tool_calls_are_not_judged():
    assert tool_call_valid(FIELDS, [], "stop") is None
    assert tool_call_valid(FIELDS, [_call("compute_exchange_rate", "{")], "length") is None
    assert tool_call_valid(None, [], None) is None


# OpenAI's structured-outputs example (platform.openai.com/docs/guides/structured-outputs)
MATH = {
    "type": "json_schema",
    "json_schema": {
        "name": "math_reasoning",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"explanation": {"type": "string"}, "output": {"type": "string"}},
                        "required": ["explanation", "output"],
                        "additionalProperties": False,
                    },
                },
                "final_answer": {"type": "string"},
            },
            "required": ["steps", "final_answer"],
            "additionalProperties": False,
        },
    },
}


def test_structured_output_validates_against_the_requested_schema():
    fields = {"response_format": MATH}
    generated = instance_of(MATH["json_schema"]["schema"], random.Random(1))
    assert structured_output_valid(fields, json.dumps(generated)) is True
    assert structured_output_valid(fields, json.dumps({"final_answer": "4"})) is False  # steps missing
    assert structured_output_valid(fields, '{"steps": [], "final_answer": ') is False  # cut by max_tokens
    assert structured_output_valid({"response_format": {"type": "json_object"}}, '{"a": 1}') is True
    assert structured_output_valid({"response_format": {"type": "json_object"}}, "[1]") is False
    assert structured_output_valid({"response_format": {"type": "text"}}, "hello") is None
    assert structured_output_valid(None, "hello") is None
    broken = {"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "nonsense"}}}}
    assert structured_output_valid(broken, "{}") is None  # the buyer's schema is at fault
